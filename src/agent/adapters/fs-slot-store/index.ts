// SPDX-License-Identifier: Apache-2.0
/**
 * {@link SlotStore} on the machine root's directories (docs/adr/0004 §2): every artifact is a file
 * (the lab's machines; `store.ts` holds the code it shares with the block-device store).
 */
import type { SlotStore } from '../../ports/slot-store.ts';
import { createSlotStore, type FsSlotStoreOptions } from './store.ts';

export { readManifest } from './manifest-file.ts';
export type { FsSlotStoreOptions } from './store.ts';

export function createFsSlotStore(root: string, options: FsSlotStoreOptions = {}): SlotStore {
  return createSlotStore(root, options);
}
