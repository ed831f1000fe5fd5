// SPDX-License-Identifier: Apache-2.0
/**
 * Pulls an installer image into a slot's staging area: resolve, check the contract from the
 * descriptors (artifact names, sizes, labels, optional signature), then stream every artifact
 * to disk hashing it in the same pass. Refuses before writing anything when the image is invalid.
 */
import type { SlotId } from '../../core/slots/slot.ts';
import type { StagedImage } from './slot-store.ts';

export interface PullProgress {
  readonly bytes: number;
  readonly total: number;
}

export interface ImageSource {
  pull(
    image: string,
    slot: SlotId,
    onProgress?: (progress: PullProgress) => void,
  ): Promise<StagedImage>;
}
