// SPDX-License-Identifier: Apache-2.0
/**
 * {@link SlotStore} on the machine root's directories (docs/adr/0004 §2), shared by the file and
 * the block-device stores: artifacts are files under the root, except those `targetsOf` names,
 * kept in place (the block store's rootfs partition) and checked and re-read there.
 * `slot.json` is always replaced atomically and written last; see `check-staged.ts` for the last
 * check of a pull and `install.ts` for how it becomes a slot, `ready` only once its boot entry is
 * written.
 */
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { artifactPath } from '../../../core/slots/layout.ts';
import type { ArtifactName, SlotId, SlotManifest } from '../../../core/slots/slot.ts';
import type { PullTargets, SlotStore, StagedImage } from '../../ports/slot-store.ts';
import { artifactDigest, present } from './placement.ts';
import { checkStaged } from './check-staged.ts';
import { installedBy, installStaged, markInstalledReady } from './install.ts';
import { readManifest, writeManifest } from './manifest-file.ts';
import { readStaged, removeStaging } from './staging.ts';

export interface FsSlotStoreOptions {
  readonly now?: () => Date;
  /** The image size cap `checkStaged` holds the staged image to (the pull's). @default defaultMaxImageBytes */
  readonly maxImageBytes?: number;
}

/** The store's in-place artifacts of a slot (none for the file store). */
export type TargetsOf = (slot: SlotId) => Promise<PullTargets>;

function verifyFailed(slot: SlotId, why: string): MoltError {
  return new MoltError(ErrorCode.SlotVerifyFailed, `slot ${slot} ${why}`, {
    hint: 'the slot cannot be booted or rolled back to; write it again with an upgrade',
  });
}

async function verify(
  root: string,
  targets: PullTargets,
  slot: SlotId,
  operationId?: string,
): Promise<SlotManifest> {
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
    const actual = await artifactDigest(root, a, targets[name as ArtifactName]);
    if (actual !== a.digest)
      throw verifyFailed(
        slot,
        `artifact ${name} (${a.path}) ${actual === undefined ? 'is missing or has the wrong size' : `hashes to ${actual}, not ${a.digest}`}`,
      );
  }
  return m;
}

async function staged(
  root: string,
  targets: PullTargets,
  slot: SlotId,
): Promise<StagedImage | undefined> {
  const r = await readStaged(root, slot);
  if (r === undefined) return undefined;
  for (const [key, a] of Object.entries(r.artifacts)) {
    const name = key as ArtifactName;
    if (!(await present(join(root, artifactPath(slot, name, true)), a.size, targets[name])))
      return undefined;
  }
  return { imageRef: r.imageRef, imageDigest: r.imageDigest, version: r.version };
}

/** The store on `root`; with `targetsOf`, those artifacts live in place and pulls are told so. */
export function createSlotStore(
  root: string,
  options: FsSlotStoreOptions,
  targetsOf?: TargetsOf,
): SlotStore {
  const now = options.now ?? (() => new Date());
  const targets = (slot: SlotId): Promise<PullTargets> =>
    targetsOf === undefined ? Promise.resolve({}) : targetsOf(slot);
  const update = async (slot: SlotId, change: (m: SlotManifest) => SlotManifest): Promise<void> => {
    const m = await readManifest(root, slot);
    if (m !== undefined) await writeManifest(root, change(m));
  };
  return {
    manifest: (slot) => readManifest(root, slot),
    staged: async (slot) => staged(root, await targets(slot), slot),
    discardStaged: (slot) => removeStaging(root, slot),
    markWriting: (slot, operationId) =>
      update(slot, (m) => ({ ...m, status: 'writing', operationId })),
    checkStaged: async (slot) =>
      checkStaged({ root, slot, targets: await targets(slot), maxBytes: options.maxImageBytes }),
    install: (slot, operationId) => installStaged({ root, slot, operationId, now }),
    verify: async (slot, operationId) => verify(root, await targets(slot), slot, operationId),
    markReady: (slot, operationId) => markInstalledReady(root, slot, operationId),
    markBad: (slot, badReason) => update(slot, (m) => ({ ...m, status: 'bad', badReason })),
    ...(targetsOf !== undefined && { pullTargets: targetsOf }),
  };
}
