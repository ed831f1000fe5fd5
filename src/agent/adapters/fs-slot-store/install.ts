// SPDX-License-Identifier: Apache-2.0
/**
 * Turning a staged pull into a slot (the WriteSlot command, docs/adr/0004 §3), in steps that can
 * each be re-run after a crash:
 * 1. fix the generation in the staged record (so a re-run uses the same number);
 * 2. for the ESP area, then the slot area: remove the old directory, rename `<dir>.next` over it
 *    (the slot area's rename carries `staged.json` along, which marks "install in progress");
 * 3. write `slot.json` `ready` (atomic), last; then drop the record.
 * Before step 3 the slot has no `ready` manifest, so it is never booted half-written.
 */
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import {
  areaDir,
  artifactPath,
  installingRecordPath,
  stagedRecordPath,
  type SlotArea,
} from '../../../core/slots/layout.ts';
import { nextGeneration, type StagedRecord } from '../../../core/slots/manifest.ts';
import {
  otherSlot,
  type ArtifactName,
  type ArtifactRecord,
  type SlotId,
  type SlotManifest,
} from '../../../core/slots/slot.ts';
import { fsyncDir, renameDurable } from '../fs/atomic-write.ts';
import { readManifest, writeManifest } from './manifest-file.ts';
import { readStaged, writeStaged } from './staging.ts';

export interface InstallInput {
  readonly root: string;
  readonly slot: SlotId;
  readonly operationId: string;
  readonly now: () => Date;
}

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Step 2 for one area; a no-op when an earlier run already renamed it. */
async function moveArea(root: string, slot: SlotId, area: SlotArea): Promise<void> {
  const from = join(root, areaDir(slot, area, true));
  if (!(await exists(from))) return;
  const to = join(root, areaDir(slot, area));
  await rm(to, { recursive: true, force: true });
  await renameDurable(from, to);
}

/** The record of the pull to install, wherever a previous run left it, with its generation fixed. */
async function recordToInstall(
  i: InstallInput,
): Promise<{ record: StagedRecord; path: string } | undefined> {
  for (const path of [stagedRecordPath(i.slot), installingRecordPath(i.slot)]) {
    const record = await readStaged(i.root, i.slot, path);
    if (record === undefined) continue;
    if (record.generation !== undefined) return { record, path };
    const manifests = await Promise.all([
      readManifest(i.root, i.slot),
      readManifest(i.root, otherSlot(i.slot)),
    ]);
    const fixed = { ...record, generation: nextGeneration(manifests) };
    await writeStaged(i.root, fixed, path);
    return { record: fixed, path };
  }
  return undefined;
}

function manifestOf(i: InstallInput, r: StagedRecord, generation: number): SlotManifest {
  const artifacts: Partial<Record<ArtifactName, ArtifactRecord>> = {};
  for (const [name, a] of Object.entries(r.artifacts))
    artifacts[name as ArtifactName] = { ...a, path: artifactPath(i.slot, name as ArtifactName) };
  return {
    schema: 1,
    slot: i.slot,
    status: 'ready',
    imageRef: r.imageRef,
    imageDigest: r.imageDigest,
    manifestDigest: r.manifestDigest,
    version: r.version,
    generation,
    artifacts,
    ...(r.lab !== undefined && { lab: r.lab }),
    operationId: i.operationId,
    writtenAt: i.now().toISOString(),
  };
}

/** Install the staged pull into the slot; idempotent (a finished install of this operation is returned as is). */
export async function installStaged(i: InstallInput): Promise<SlotManifest> {
  const found = await recordToInstall(i);
  if (found === undefined) {
    const current = await readManifest(i.root, i.slot);
    if (current?.status === 'ready' && current.operationId === i.operationId) return current;
    throw new MoltError(ErrorCode.MachineInvalid, `slot ${i.slot} has no staged image to install`, {
      hint: 'the pull was discarded or never completed; start the upgrade again',
    });
  }
  const { record } = found;
  await moveArea(i.root, i.slot, 'esp');
  await moveArea(i.root, i.slot, 'slot');
  const manifest = manifestOf(i, record, record.generation ?? 1);
  await writeManifest(i.root, manifest);
  await rm(join(i.root, installingRecordPath(i.slot)), { force: true });
  await fsyncDir(join(i.root, areaDir(i.slot, 'slot')));
  return manifest;
}
