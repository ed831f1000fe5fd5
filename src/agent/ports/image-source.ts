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

/** What a caller can give a pull besides the image and the slot. */
export interface PullOptions {
  readonly onProgress?: (progress: PullProgress) => void;
  /**
   * Stops the pull at once (a cancel, the pull deadline): it rejects with the signal's reason and
   * leaves no staging area behind.
   */
  readonly signal?: AbortSignal;
}

export interface ImageSource {
  pull(image: string, slot: SlotId, options?: PullOptions): Promise<StagedImage>;
}
