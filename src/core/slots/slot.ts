// SPDX-License-Identifier: Apache-2.0
/**
 * The two boot slots of a machine and the manifest written beside each slot's artifacts
 * (docs/adr/0004 §2). The manifest is written last, so a slot without `status: 'ready'` is never
 * booted or rolled back to.
 */

export type SlotId = 'A' | 'B';
export const SlotIds: readonly SlotId[] = ['A', 'B'];

/** The slot that is not `slot`. */
export function otherSlot(slot: SlotId): SlotId {
  return slot === 'A' ? 'B' : 'A';
}

/** Lower-case directory / entry name of a slot: `a`, `b`. */
export function slotDir(slot: SlotId): 'a' | 'b' {
  return slot === 'A' ? 'a' : 'b';
}

/** Artifact names an installer image may carry, one layer each (or one file each in a tar layer). */
export const ArtifactName = {
  Kernel: 'vmlinuz',
  Initrd: 'initrd.img',
  Rootfs: 'rootfs.img',
  Cmdline: 'cmdline',
} as const;
export type ArtifactName = (typeof ArtifactName)[keyof typeof ArtifactName];
export const RequiredArtifacts: readonly ArtifactName[] = ['vmlinuz', 'rootfs.img'];

export interface ArtifactRecord {
  /** Path relative to the machine root, e.g. `esp/molt/b/vmlinuz`. */
  readonly path: string;
  readonly size: number;
  /** `sha256:<hex>` of the file's bytes. */
  readonly digest: string;
  /** The layer the file came from, when that is a tar layer (its digest is not the file's). */
  readonly layerDigest?: string;
}

/** Lab-only behaviour an image may declare (labels `dev.molt.lab.boot`, `dev.molt.lab.health`). */
export interface LabBehaviour {
  readonly boot: 'ok' | 'fail';
  readonly health: 'ok' | 'never';
}

export type SlotStatus = 'ready' | 'writing' | 'bad';

/** `slots/<slot>/slot.json`. */
export interface SlotManifest {
  readonly schema: 1;
  readonly slot: SlotId;
  readonly status: SlotStatus;
  readonly badReason?: string;
  readonly imageRef: string;
  /** Digest of the image manifest the slot was written from. */
  readonly imageDigest: string;
  /** Digest of the platform manifest (differs from `imageDigest` when the reference is an index). */
  readonly manifestDigest?: string;
  readonly version: string;
  /**
   * The release's kubelet (its `molt.dev/kubelet-version` label), which the booted slot's node
   * must report running; absent for a release without a node runtime.
   */
  readonly kubeletVersion?: string;
  /** Strictly increasing across writes on this machine (sd-boot `version` sorts by it). */
  readonly generation: number;
  readonly artifacts: Partial<Record<ArtifactName, ArtifactRecord>>;
  readonly lab?: LabBehaviour;
  readonly operationId: string;
  /** ISO 8601. */
  readonly writtenAt: string;
}
