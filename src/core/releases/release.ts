// SPDX-License-Identifier: Apache-2.0
/**
 * The release model (docs/adr/0002-release-model.md). A release is an installer image identified by
 * its manifest digest; tags are aliases; metadata comes from the image config labels.
 */

/** Image config label keys molt reads. Written by the release publisher (a human or `molt dev publish`). */
export const ReleaseLabel = {
  Version: 'org.opencontainers.image.version',
  Created: 'org.opencontainers.image.created',
  Channels: 'dev.molt.channels',
  Official: 'dev.molt.official',
  Kubernetes: 'dev.molt.kubernetes',
  /** The Kubernetes version the image carries (`vX.Y.Z`): what a Cluster API Machine's `spec.version` maps to (ADR 0014). */
  KubernetesVersion: 'dev.molt.kubernetes.version',
  UpgradeFrom: 'dev.molt.upgrade-from',
  /**
   * The kubelet an OS release with a node runtime carries (`v1.35.4`): the agent checks it against
   * the cluster's API server before an upgrade (core/kubernetes/kubelet-skew.ts).
   */
  KubeletVersion: 'molt.dev/kubelet-version',
  /** The containerd such a release carries (`v2.4.2`), for people and dashboards. */
  ContainerdVersion: 'molt.dev/containerd-version',
  /**
   * The root of rootfs.img's dm-verity hash tree (64 hex digits) and the byte where the tree
   * starts (docs/adr/0019 §3). In the image config, so the manifest digest a signature covers
   * covers them.
   */
  VerityRootHash: 'dev.molt.verity.roothash',
  VerityOffset: 'dev.molt.verity.offset',
} as const;

/** What signature verification concluded for a release. */
export type SignatureState =
  | { readonly status: 'verified'; readonly format: 'cosign-legacy' | 'sigstore-bundle' }
  | { readonly status: 'unsigned' }
  | { readonly status: 'invalid'; readonly reason: string }
  | { readonly status: 'unchecked' };

/** One release: a digest, its tag aliases and the metadata its labels declare. */
export interface Release {
  /** Manifest digest as served for the tags (an index digest for multi-platform images). */
  readonly digest: string;
  /** The most specific tag (long, then intermediate, then short). */
  readonly tag: string;
  /** Every tag pointing at this digest, most specific first. */
  readonly tags: readonly string[];
  /** `org.opencontainers.image.version`, or the most specific tag when the label is absent. */
  readonly version: string;
  readonly channels: readonly string[];
  readonly official: boolean;
  /** Informational only: may be missing or 1970. Never used for ordering. */
  readonly created: string | undefined;
  /** Semver range of supported Kubernetes versions; undefined = no constraint declared. */
  readonly kubernetes: string | undefined;
  /**
   * The Kubernetes version the image carries (`vX.Y.Z`, label `dev.molt.kubernetes.version`):
   * what a Cluster API Machine's `spec.version` maps to (ADR 0014). Optional: most releases do not say.
   */
  readonly kubernetesVersion?: string;
  /**
   * The kubelet the OS release carries (label `molt.dev/kubelet-version`): discovery offers it only
   * to a cluster whose API server the kubelet skew policy allows it against. Optional: releases
   * without a node runtime do not say.
   */
  readonly kubelet?: string;
  /** Semver range of versions that may upgrade directly to this one; undefined = any. */
  readonly upgradeFrom: string | undefined;
  readonly signature: SignatureState;
}

/** A tag or digest that discovery looked at and skipped, with the reason. Never fatal. */
export interface SkippedTag {
  readonly tag: string;
  /** Set when a whole digest was skipped (bad labels); `tag` is then its most specific tag. */
  readonly digest?: string;
  readonly code: string;
  readonly reason: string;
}
