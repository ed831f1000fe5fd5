// SPDX-License-Identifier: Apache-2.0
/**
 * {@link SlotStore} on the machine root's directories (docs/adr/0004 §2). `slot.json` is always
 * replaced atomically and written last; see `check-staged.ts` for the last check of a pull and
 * `install.ts` for how it becomes a slot, `ready` only once its boot entry is written.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { artifactPath } from '../../../core/slots/layout.ts';
import type { ArtifactName, SlotId, SlotManifest } from '../../../core/slots/slot.ts';
import type { SlotStore, StagedImage } from '../../ports/slot-store.ts';
import { fileDigest } from './file-digest.ts';
import { checkStaged } from './check-staged.ts';
import { installedBy, installStaged, markInstalledReady } from './install.ts';
import { readManifest, writeManifest } from './manifest-file.ts';
import { readStaged, removeStaging } from './staging.ts';

export { readManifest } from './manifest-file.ts';

export interface FsSlotStoreOptions {
  readonly now?: () => Date;
  /** The image size cap `checkStaged` holds the staged image to (the pull's). @default defaultMaxImageBytes */
  readonly maxImageBytes?: number;
}

function verifyFailed(slot: SlotId, why: string): MoltError {
  return new MoltError(ErrorCode.SlotVerifyFailed, `slot ${slot} ${why}`, {
    hint: 'the slot cannot be booted or rolled back to; write it again with an upgrade',
  });
}

async function verify(root: string, slot: SlotId, operationId?: string): Promise<SlotManifest> {
  const m =
    operationId === undefined
      ? await readManifest(root, slot)
      : await installedBy(root, slot, operationId);
  if (m === undefined)
    throw verifyFailed(
      slot,
      operationId === undefined ? 'holds no image' : `holds no image written by ${operationId}`,
    );
  if (operationId === undefined && m.status !== 'ready')
    throw verifyFailed(
      slot,
      `is ${m.status}${m.badReason === undefined ? '' : ` (${m.badReason})`}, not ready`,
    );
  for (const [name, a] of Object.entries(m.artifacts)) {
    const actual = await fileDigest(join(root, a.path), a.size);
    if (actual !== a.digest)
      throw verifyFailed(
        slot,
        `artifact ${name} (${a.path}) ${actual === undefined ? 'is missing or has the wrong size' : `hashes to ${actual}, not ${a.digest}`}`,
      );
  }
  return m;
}

async function staged(root: string, slot: SlotId): Promise<StagedImage | undefined> {
  const r = await readStaged(root, slot);
  if (r === undefined) return undefined;
  for (const [name, a] of Object.entries(r.artifacts)) {
    const info = await stat(join(root, artifactPath(slot, name as ArtifactName, true))).catch(
      () => undefined,
    );
    if (info?.size !== a.size) return undefined;
  }
  return { imageRef: r.imageRef, imageDigest: r.imageDigest, version: r.version };
}

export function createFsSlotStore(root: string, options: FsSlotStoreOptions = {}): SlotStore {
  const now = options.now ?? (() => new Date());
  const update = async (slot: SlotId, change: (m: SlotManifest) => SlotManifest): Promise<void> => {
    const m = await readManifest(root, slot);
    if (m !== undefined) await writeManifest(root, change(m));
  };
  return {
    manifest: (slot) => readManifest(root, slot),
    staged: (slot) => staged(root, slot),
    discardStaged: (slot) => removeStaging(root, slot),
    markWriting: (slot, operationId) =>
      update(slot, (m) => ({ ...m, status: 'writing', operationId })),
    checkStaged: (slot) => checkStaged(root, slot, options.maxImageBytes),
    install: (slot, operationId) => installStaged({ root, slot, operationId, now }),
    verify: (slot, operationId) => verify(root, slot, operationId),
    markReady: (slot, operationId) => markInstalledReady(root, slot, operationId),
    markBad: (slot, badReason) => update(slot, (m) => ({ ...m, status: 'bad', badReason })),
  };
}
