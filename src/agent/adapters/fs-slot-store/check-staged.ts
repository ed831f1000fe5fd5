// SPDX-License-Identifier: Apache-2.0
/**
 * `checkStaged`: the staged pull as the core's last check sees it (core/boot/staged-image.ts) —
 * its record, every file present at its recorded size, and the `cmdline` bytes, re-hashed (they
 * are at most 2 KiB) so the check reads what the pull verified.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkStagedImage } from '../../../core/boot/staged-image.ts';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { cmdlineTooLong, MaxCmdlineBytes } from '../../../core/slots/contract.ts';
import { artifactPath } from '../../../core/slots/layout.ts';
import type { StagedRecord } from '../../../core/slots/manifest.ts';
import type { ArtifactName, SlotId } from '../../../core/slots/slot.ts';
import type { PullTargets, StagedImage } from '../../ports/slot-store.ts';
import { readStaged } from './staging.ts';
import { checkFits, present } from './placement.ts';

function incomplete(slot: SlotId, why: string): MoltError {
  return new MoltError(ErrorCode.MachineInvalid, `the image staged for slot ${slot} ${why}`, {
    hint: 'the pull was discarded or the staging area damaged; start the upgrade again',
  });
}

async function readCmdline(root: string, slot: SlotId, record: StagedRecord): Promise<string> {
  const a = record.artifacts.cmdline;
  if (a === undefined) return '';
  if (a.size > MaxCmdlineBytes) throw cmdlineTooLong(a.size);
  const bytes = await readFile(join(root, artifactPath(slot, 'cmdline', true)));
  if (`sha256:${createHash('sha256').update(bytes).digest('hex')}` !== a.digest)
    throw incomplete(slot, `has a cmdline that does not hash to ${a.digest}`);
  return bytes.toString('latin1');
}

export interface CheckStagedInput {
  readonly root: string;
  readonly slot: SlotId;
  /** Artifacts kept in place: there, the record's size must fit the target. */
  readonly targets: PullTargets;
  readonly maxBytes: number | undefined;
}

/** Check the staged image of `slot` before the slot is touched; see core `checkStagedImage`. */
export async function checkStaged(i: CheckStagedInput): Promise<StagedImage> {
  const { root, slot, maxBytes } = i;
  const record = await readStaged(root, slot);
  if (record === undefined) throw incomplete(slot, 'is missing (no staged.json)');
  for (const [key, a] of Object.entries(record.artifacts)) {
    const name = key as ArtifactName;
    const path = join(root, artifactPath(slot, name, true));
    const target = i.targets[name];
    if (target !== undefined) checkFits(name, a.size, target);
    if (!(await present(path, a.size, target)))
      throw incomplete(slot, `has no ${name} of ${a.size} bytes`);
  }
  const cmdline = await readCmdline(root, slot, record);
  checkStagedImage({ slot, record, cmdline, ...(maxBytes !== undefined && { maxBytes }) });
  return { imageRef: record.imageRef, imageDigest: record.imageDigest, version: record.version };
}
