// SPDX-License-Identifier: Apache-2.0
/**
 * Wire shapes of releases as `molt releases … -o json|yaml` prints them and as the operator will
 * serve them. Field names are a public contract: add fields, never rename them.
 */
import type { Release } from '../core/releases/release.ts';
import { when } from '../core/time.ts';

/** One release as printed by `molt releases list -o json`. */
export interface ReleaseView {
  readonly tag: string;
  readonly tags: readonly string[];
  readonly version: string;
  readonly digest: string;
  readonly channels: readonly string[];
  readonly official: boolean;
  readonly created: string | null;
  readonly kubernetes: string | null;
  readonly upgradeFrom: string | null;
  /** The Kubernetes version the image carries (`dev.molt.kubernetes.version`), when it says. */
  readonly kubernetesVersion?: string;
  /** `verified`, `unsigned`, `invalid` or `unchecked` (no public key given). */
  readonly signature: string;
}

/** A release that `latest` did not choose, and why. */
export interface RejectionView {
  readonly version: string;
  readonly tag: string;
  readonly digest: string;
  readonly code: string;
  readonly reason: string;
}

/** What `molt releases latest -o json` prints; `release` fields are spread at the top level. */
export type LatestView = Partial<ReleaseView> & {
  readonly found: boolean;
  /** Why nothing qualified, when `found` is false. */
  readonly reason?: string;
  readonly channel: string;
  readonly current: string | null;
  /** Versions to install in order, ending with the chosen release; `[version]` when direct. */
  readonly path: readonly string[];
  readonly rejected: readonly RejectionView[];
};

/** The wire view of a {@link Release}. */
export function toReleaseView(r: Release): ReleaseView {
  return {
    tag: r.tag,
    tags: [...r.tags],
    version: r.version,
    digest: r.digest,
    channels: [...r.channels],
    official: r.official,
    created: r.created ?? null,
    kubernetes: r.kubernetes ?? null,
    upgradeFrom: r.upgradeFrom ?? null,
    ...(r.kubernetesVersion !== undefined && { kubernetesVersion: r.kubernetesVersion }),
    signature: r.signature.status,
  };
}

/** A column of a table view: header and how to read the cell from a row. */
export interface PrintColumn<T> {
  readonly header: string;
  /** The cell; `now` (epoch ms, the renderer's clock) for times shown with how long ago they were. */
  readonly value: (row: T, now: number) => string;
}

const shortDigest = (d: string): string => d.replace(/^sha256:/, '').slice(0, 12);

/**
 * `2026-11-24T10:00:00.000Z` → `2026-11-24T10:00:00Z (5m ago)`: the one way a time is shown to
 * people (core's `when`); `-` when there is none.
 */
export const shownAt = (at: string | undefined, now: number): string => {
  const t = at === undefined ? NaN : Date.parse(at);
  return Number.isNaN(t) ? (at ?? '-') : when(t, now);
};

/** Columns of `molt releases list` (and, later, the dashboard's release table). */
export const releaseColumns: readonly PrintColumn<ReleaseView>[] = [
  { header: 'VERSION', value: (r) => r.version },
  { header: 'TAGS', value: (r) => r.tags.join(',') },
  { header: 'DIGEST', value: (r) => shortDigest(r.digest) },
  { header: 'CHANNELS', value: (r) => r.channels.join(',') || '-' },
  { header: 'OFFICIAL', value: (r) => (r.official ? 'yes' : 'no') },
  { header: 'KUBERNETES', value: (r) => r.kubernetes ?? '*' },
  { header: 'UPGRADE-FROM', value: (r) => r.upgradeFrom ?? '*' },
  { header: 'SIGNATURE', value: (r) => r.signature },
  { header: 'CREATED', value: (r, now) => shownAt(r.created ?? undefined, now) },
];

/** Columns of the rejection table under `molt releases latest`. */
export const rejectionColumns: readonly PrintColumn<RejectionView>[] = [
  { header: 'VERSION', value: (r) => r.version },
  { header: 'TAG', value: (r) => r.tag },
  { header: 'CODE', value: (r) => r.code },
  { header: 'WHY NOT', value: (r) => r.reason },
];
