// SPDX-License-Identifier: Apache-2.0
import type { MovedTag } from '../../core/releases/rebuilds.ts';
import type { Release, SkippedTag } from '../../core/releases/release.ts';
import type { Platform, RegistryReader, RequestStats } from '../../oci/types.ts';
import type { CacheWarning, ReleaseCache } from '../cache/types.ts';

/** Options of {@link discoverReleases}. */
export interface DiscoverOptions {
  readonly reader: RegistryReader;
  readonly repository: string;
  /** Where metadata is remembered between scans ({@link FileReleaseCache}, {@link InMemoryReleaseCache}). */
  readonly cache: ReleaseCache;
  /**
   * The registry's name, as part of the cache key. Optional because metadata is keyed by digest
   * (content-addressed, so safe to share); give it when one cache holds several registries, so
   * rebuild detection compares each registry with its own previous tags.
   */
  readonly registry?: string | undefined;
  /** Platform whose config labels are read from multi-platform releases. @default linux/amd64 */
  readonly platform?: Platform | undefined;
  /** When given, each release's signature is checked against this key; else `unchecked`. */
  readonly publicKeyPem?: string | undefined;
  /** Registry requests in flight at once (the client may cap lower). @default 16 */
  readonly concurrency?: number | undefined;
  readonly onProgress?: ((progress: DiscoveryProgress) => void) | undefined;
}

/** Scan phases, in order. */
export type DiscoveryPhase = 'list' | 'head' | 'metadata' | 'signatures';

/** Progress of a scan: `done` of `total` steps of `phase` finished. */
export interface DiscoveryProgress {
  readonly phase: DiscoveryPhase;
  readonly done: number;
  readonly total: number;
}

/** What a scan found. */
export interface DiscoveryResult {
  /** Newest first. */
  readonly releases: readonly Release[];
  /** Tags and digests that were looked at and skipped, with code and reason. */
  readonly skipped: readonly SkippedTag[];
  /** Scheme tags that point at another digest than on the previous scan (advanced, rebuilt or reverted). */
  readonly moved: readonly MovedTag[];
  /** The moves that are rebuilds: same `(app, rev)`, new digest (an intermediate or long tag moved). */
  readonly rebuilds: readonly MovedTag[];
  /** Requests this scan made (the difference of the reader's counters). */
  readonly requests: RequestStats;
  /** Non-fatal cache problems (corrupt file rebuilt, cache not writable). */
  readonly warnings: readonly CacheWarning[];
}
