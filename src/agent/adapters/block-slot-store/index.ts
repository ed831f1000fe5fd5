// SPDX-License-Identifier: Apache-2.0
/**
 * {@link SlotStore} of a real machine (docs/real-machines.md, docs/adr/0008 §3): `slot.json` and
 * `cmdline` stay files under `slots/<x>/` (on STATE), kernel and initramfs files on the ESP, but
 * `rootfs.img` is the slot's partition. A pull streams the root filesystem straight into it
 * (`pullTargets`: stream → hash → write → fsync, no staging copy), after the executor made the slot
 * unbootable; `install` has nothing to move for it and records it in the manifest (size, digest,
 * the usual `slots/<x>/rootfs.img` path); `verify` re-reads exactly `size` bytes of the partition.
 * A pull cut short leaves no `staged.json`, so the partition is never trusted after a crash: the
 * pull runs again, or re-hashes the partition when its record is complete.
 */
import type { SlotId } from '../../../core/slots/slot.ts';
import type { PullTargets, SlotStore } from '../../ports/slot-store.ts';
import { createSlotStore, type FsSlotStoreOptions } from '../fs-slot-store/store.ts';
import { partitionTarget, type Partition } from './partition.ts';

export type { Partition } from './partition.ts';

export interface BlockSlotStoreOptions extends FsSlotStoreOptions {
  /**
   * Each slot's partition: a device path (machine config `disk.slots`, e.g.
   * `/dev/disk/by-partlabel/molt-a`) or a region of a file.
   */
  readonly partitions: Readonly<Record<SlotId, Partition | string>>;
}

export function createBlockSlotStore(root: string, options: BlockSlotStoreOptions): SlotStore {
  const targets = async (slot: SlotId): Promise<PullTargets> => {
    const p = options.partitions[slot];
    return { 'rootfs.img': await partitionTarget(typeof p === 'string' ? { path: p } : p) };
  };
  return createSlotStore(root, options, targets);
}
