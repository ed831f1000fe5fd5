// SPDX-License-Identifier: Apache-2.0
/**
 * The two slots' artifacts and manifests on disk (docs/adr/0004 §2). A pull writes into the
 * slot's staging area (`*.next`) while the machine still runs; `install` moves it into the slot
 * after the slot was marked unbootable.
 */
import type { SlotId, SlotManifest } from '../../core/slots/slot.ts';

export interface StagedImage {
  readonly imageRef: string;
  readonly imageDigest: string;
  readonly version: string;
}

export interface SlotStore {
  /** The slot's manifest, or undefined when the slot was never written. */
  manifest(slot: SlotId): Promise<SlotManifest | undefined>;
  /** What is staged for the slot, if a complete, verified pull is there. */
  staged(slot: SlotId): Promise<StagedImage | undefined>;
  discardStaged(slot: SlotId): Promise<void>;
  /** Manifest → `writing` (kept fields), before any artifact is replaced. */
  markWriting(slot: SlotId, operationId: string): Promise<void>;
  /** Move the staged artifacts into the slot and write its manifest `ready`, last. */
  install(slot: SlotId, operationId: string): Promise<SlotManifest>;
  /** Re-hash every artifact against the manifest; throws `MOLT_SLOT_VERIFY_FAILED`. */
  verify(slot: SlotId): Promise<SlotManifest>;
  markBad(slot: SlotId, reason: string): Promise<void>;
}
