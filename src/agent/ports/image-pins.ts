// SPDX-License-Identifier: Apache-2.0
/**
 * The node's container runtime as far as pinned images go (docs/adr/0015 §7): an image pinned
 * there carries the CRI's `io.cri-containerd.pinned=pinned` label, which the kubelet's image
 * garbage collection honours (the CRI reports the image `pinned`). References are by digest
 * (`host/repo[:tag]@sha256:…`) and are the runtime's image names.
 */
export interface ImagePins {
  /**
   * Pull `reference` when the runtime lacks it (through the node's registry mirrors), then label it
   * pinned. Idempotent. An image that cannot be pulled or labelled is `MOLT_IMAGE_PIN_FAILED`.
   */
  pin(reference: string): Promise<void>;
  /** Remove the label; the image stays. An image the runtime does not hold is no error. */
  unpin(reference: string): Promise<void>;
  /** The names of every image that carries the label, whoever set it. */
  pinned(): Promise<string[]>;
  /** Whether the runtime holds an image by that name. */
  present(reference: string): Promise<boolean>;
}

/** The CRI's label (containerd `internal/cri/labels`): the kubelet never garbage-collects such an image. */
export const PinnedLabel = { key: 'io.cri-containerd.pinned', value: 'pinned' } as const;

/** Which pins are this agent's, kept on STATE so they outlive restarts and EPHEMERAL wipes. */
export interface PinnedRecord {
  /** The list last asked for. */
  readonly wanted: readonly string[];
  /** The images whose label this agent set (and so may remove). */
  readonly ours: readonly string[];
}

export interface PinnedRecordStore {
  /** The record last saved; empty lists when there is none. A file molt did not write is MOLT_MACHINE_INVALID. */
  load(): Promise<PinnedRecord>;
  /** Replace it atomically. */
  save(record: PinnedRecord): Promise<void>;
}
