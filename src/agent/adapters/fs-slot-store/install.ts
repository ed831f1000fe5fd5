// SPDX-License-Identifier: Apache-2.0
/**
 * Turning a staged pull into a slot (the WriteSlot command, docs/adr/0004 §3), in steps that can
 * each be re-run after a crash:
 * 1. fix the generation in the staged record (so a re-run uses the same number);
 * 2. for the ESP area, then the slot area: remove the old directory, rename `<dir>.next` over it
 *    (the slot area's rename carries `staged.json` along, which marks "install in progress");
 * 3. write `slot.json` for the new image, still `writing` (atomic); the record stays, so the
 *    install is known to be this one's until the slot is ready.
 * `markReady` (after VerifySlot and WriteBootEntry) writes `slot.json` `ready`, last, then drops
 * the record. Until then the slot has no `ready` manifest: it is never booted half-written, and
 * never passes as a rollback target without its boot entry.
 */
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import {
  areaDir,
  installingRecordPath,
  stagedRecordPath,
  type SlotArea,
} from '../../../core/slots/layout.ts';
import { installedManifest } from '../../../core/slots/installed.ts';
import { nextGeneration, type StagedRecord } from '../../../core/slots/manifest.ts';
import { otherSlot, type SlotId, type SlotManifest } from '../../../core/slots/slot.ts';
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

/**
 * The manifest of the install `operationId` made in `slot`: `ready`, or `writing` with its record
 * still beside it (a `writing` manifest without one is a slot marked unbootable, not an install).
 */
export async function installedBy(
  root: string,
  slot: SlotId,
  operationId: string,
): Promise<SlotManifest | undefined> {
  const m = await readManifest(root, slot);
  if (m?.operationId !== operationId) return undefined;
  if (m.status === 'ready') return m;
  if (m.status !== 'writing') return undefined;
  const record = await readStaged(root, slot, installingRecordPath(slot));
  const same = record?.imageDigest === m.imageDigest && record.generation === m.generation;
  return same ? m : undefined;
}

function nothingStaged(slot: SlotId): MoltError {
  return new MoltError(ErrorCode.MachineInvalid, `slot ${slot} has no staged image to install`, {
    hint: 'the pull was discarded or never completed; start the upgrade again',
  });
}

/** Install the staged pull into the slot, `writing`; idempotent (an install of this operation is returned as is). */
export async function installStaged(i: InstallInput): Promise<SlotManifest> {
  const found = await recordToInstall(i);
  const current = await installedBy(i.root, i.slot, i.operationId);
  const resuming = found?.path === installingRecordPath(i.slot);
  if (current !== undefined && (found === undefined || resuming)) return current;
  if (found === undefined) throw nothingStaged(i.slot);
  // An install in progress is resumed only by its operation (MarkSlotUnbootable marked the slot).
  const before = resuming ? await readManifest(i.root, i.slot) : undefined;
  if (before !== undefined && before.operationId !== i.operationId) throw nothingStaged(i.slot);
  const { record } = found;
  await moveArea(i.root, i.slot, 'esp');
  await moveArea(i.root, i.slot, 'slot');
  const manifest = installedManifest({
    slot: i.slot,
    record,
    operationId: i.operationId,
    generation: record.generation ?? 1,
    writtenAt: i.now().toISOString(),
  });
  await writeManifest(i.root, manifest);
  await fsyncDir(join(i.root, areaDir(i.slot, 'slot')));
  return manifest;
}

/** The install of `operationId` becomes `ready` (its boot entry is written); a no-op once it is. */
export async function markInstalledReady(
  root: string,
  slot: SlotId,
  operationId: string,
): Promise<SlotManifest> {
  const m = await installedBy(root, slot, operationId);
  if (m === undefined)
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `slot ${slot} holds no image written by operation ${operationId}`,
      { hint: 'the slot changed under the upgrade; start the upgrade again' },
    );
  if (m.status === 'ready') return m;
  const ready: SlotManifest = { ...m, status: 'ready' };
  await writeManifest(root, ready);
  await rm(join(root, installingRecordPath(slot)), { force: true });
  await fsyncDir(join(root, areaDir(slot, 'slot')));
  return ready;
}
