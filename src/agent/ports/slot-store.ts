// SPDX-License-Identifier: Apache-2.0
/**
 * The two slots' artifacts and manifests on disk (docs/adr/0004 §2). A pull writes into the
 * slot's staging area (`*.next`) while the machine still runs; `checkStaged` checks it there,
 * before anything is disrupted; `install` moves it into the slot after the slot was marked
 * unbootable, `writing`; `markReady` makes the slot `ready` once its boot entry is written.
 *
 * A store may keep some artifacts in place instead (the block-device store: `rootfs.img` is the
 * slot's partition, docs/adr/0008 §3): `pullTargets` names where a pull writes them, and the pull
 * then overwrites the slot itself, so the slot is made unbootable before its first byte.
 */
import type { ArtifactName, SlotId, SlotManifest } from '../../core/slots/slot.ts';

export interface StagedImage {
  readonly imageRef: string;
  readonly imageDigest: string;
  readonly version: string;
}

/** A region a pull writes one artifact straight into (a slot's partition), not a staging file. */
export interface ArtifactTarget {
  /** A block device or a file; opened for writing without create or truncate. */
  readonly path: string;
  /** Where the region starts in `path`, in bytes. */
  readonly offset: number;
  /** The region's size in bytes: a larger artifact is `MOLT_IMAGE_TOO_LARGE`, with nothing written. */
  readonly capacity: number;
}

/** The artifacts a store keeps in place, by name. */
export type PullTargets = Readonly<Partial<Record<ArtifactName, ArtifactTarget>>>;

export interface SlotStore {
  /** The slot's manifest, or undefined when the slot was never written. */
  manifest(slot: SlotId): Promise<SlotManifest | undefined>;
  /** What is staged for the slot, if a complete, verified pull is there. */
  staged(slot: SlotId): Promise<StagedImage | undefined>;
  discardStaged(slot: SlotId): Promise<void>;
  /**
   * Every check of the staged image the slot store can make before the slot is touched (artifact
   * set, sizes, `cmdline`, the boot entry the slot will get: core `checkStagedImage`); throws
   * `MOLT_IMAGE_INVALID`, `MOLT_IMAGE_TOO_LARGE`, or `MOLT_MACHINE_INVALID` when nothing complete is staged.
   */
  checkStaged(slot: SlotId): Promise<StagedImage>;
  /** Manifest → `writing` (kept fields), before any artifact is replaced. */
  markWriting(slot: SlotId, operationId: string): Promise<void>;
  /**
   * Move the staged artifacts into the slot and write its manifest, still `writing` (artifacts
   * kept in place are already there: the manifest records them).
   */
  install(slot: SlotId, operationId: string): Promise<SlotManifest>;
  /**
   * Re-hash every artifact against the manifest; throws `MOLT_SLOT_VERIFY_FAILED`. Without
   * `operationId` the slot must be `ready`; with it, it must hold that operation's install.
   */
  verify(slot: SlotId, operationId?: string): Promise<SlotManifest>;
  /** The install of `operationId` becomes `ready`, last (a no-op once it is); else `MOLT_MACHINE_INVALID`. */
  markReady(slot: SlotId, operationId: string): Promise<SlotManifest>;
  markBad(slot: SlotId, reason: string): Promise<void>;
  /**
   * Where a pull into `slot` writes the artifacts this store keeps in place. Absent on stores that
   * stage every artifact as a file: their pull overwrites nothing, and the slot is marked
   * `writing` only when it is written (WritingSlot). When present, the executor makes the slot
   * unbootable during the pull, before the first byte reaches a target.
   */
  pullTargets?(slot: SlotId): Promise<PullTargets>;
}
