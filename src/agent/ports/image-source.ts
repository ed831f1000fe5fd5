// SPDX-License-Identifier: Apache-2.0
/**
 * Pulls an installer image into a slot's staging area: resolve, check the contract from the
 * descriptors (artifact names, sizes, labels, optional signature), then stream every artifact
 * to disk hashing it in the same pass. Refuses before writing anything when the image is invalid.
 * Artifacts the slot store keeps in place (`inPlace`) are streamed straight into their target.
 */
import type { SlotId } from '../../core/slots/slot.ts';
import type { PullTargets, StagedImage } from './slot-store.ts';

export interface PullProgress {
  readonly bytes: number;
  readonly total: number;
}

/** Artifacts written in place (the slot store's `pullTargets`), and what must come first. */
export interface InPlaceWrite {
  readonly targets: PullTargets;
  /**
   * Awaited once per pull, after every check that needs no artifact bytes (signature, contract,
   * artifact sizes against the targets) and before the first byte is written to a target: the
   * slot the targets belong to is made unbootable there (docs/adr/0008 §3). Not called when the
   * image is refused before.
   */
  readonly beforeOverwrite: () => Promise<void>;
}

/** What a pull resolved the reference to. */
export interface ResolvedImage {
  readonly digest: string;
  readonly version: string;
  /** The image config's labels: the release's metadata (`molt.dev/kubelet-version`, …). */
  readonly labels: Readonly<Record<string, string>>;
}

/** What a caller can give a pull besides the image and the slot. */
export interface PullOptions {
  /**
   * Awaited once the reference is resolved and the image checked, before anything is written
   * (staging or in place): a rejection refuses the pull, with nothing staged and the slot untouched.
   */
  readonly checkResolved?: (image: ResolvedImage) => void | Promise<void>;
  readonly onProgress?: (progress: PullProgress) => void;
  /**
   * Stops the pull at once (a cancel, the pull deadline): it rejects with the signal's reason and
   * leaves no staging area behind.
   */
  readonly signal?: AbortSignal;
  /** Write these artifacts into their targets instead of the staging area. */
  readonly inPlace?: InPlaceWrite;
}

export interface ImageSource {
  pull(image: string, slot: SlotId, options?: PullOptions): Promise<StagedImage>;
}
