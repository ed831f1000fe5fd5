// SPDX-License-Identifier: Apache-2.0
/**
 * The discovery cache port. What discovery remembers between scans of one repository, so that a
 * re-scan with nothing changed costs one tag list plus one HEAD per tag and no manifest or blob
 * GETs (docs/adr/0002-release-model.md, reference/oci-discovery.md §5.1-5.2).
 */
import type { ErrorCode } from '../../core/errors.ts';

/**
 * What one image digest (for one platform) told us. Content is immutable per digest, so both
 * outcomes are cached indefinitely; only the labels molt reads are kept, and the `Release` is
 * rebuilt from them on every scan because its tags and version fallback change with the tag set.
 */
export type ImageEntry =
  | {
      readonly ok: true;
      /** The config labels molt reads (keys of `ReleaseLabel`); other labels are dropped. */
      readonly labels: Readonly<Record<string, string>>;
      /** The config's own `created` field, if any. */
      readonly created?: string;
    }
  | { readonly ok: false; readonly code: string; readonly reason: string };

/** A verified signature verdict; only these are cached (see discovery/signatures.ts for why). */
export interface SignatureEntry {
  readonly format: 'cosign-legacy' | 'sigstore-bundle';
}

/** Everything remembered about one registry + repository. */
export interface RepositoryState {
  /** Tag → digest as of the last completed scan: the baseline for rebuild detection. */
  readonly tags: Readonly<Record<string, string>>;
  /** Platform (`os/arch[/variant]`) → digest → what that image's config said. */
  readonly images: Readonly<Record<string, Readonly<Record<string, ImageEntry>>>>;
  /** `<digest> <public-key fingerprint>` → verified verdict. */
  readonly signatures: Readonly<Record<string, SignatureEntry>>;
}

/** A non-fatal problem with the cache (corrupt file, unwritable directory). */
export interface CacheWarning {
  readonly code: ErrorCode;
  readonly message: string;
}

/** What {@link ReleaseCache.load} returns: the state (empty when none) and any warnings. */
export interface CacheLoad {
  readonly state: RepositoryState;
  readonly warnings: readonly CacheWarning[];
}

/**
 * Storage for {@link RepositoryState}, keyed by `<registry>/<repository>`. Implementations never
 * throw for a missing, corrupt or foreign-version store: they report a warning and start empty,
 * because a cache must never be the reason discovery fails.
 */
export interface ReleaseCache {
  load(key: string): Promise<CacheLoad>;
  /** Replace the state of `key`; returns warnings instead of throwing when the store is unwritable. */
  save(key: string, state: RepositoryState): Promise<readonly CacheWarning[]>;
}

/** A state with nothing in it: the first scan of a repository. */
export function emptyState(): RepositoryState {
  return { tags: {}, images: {}, signatures: {} };
}

/**
 * The cache key of a repository: the registry as `host[:port]` (scheme and trailing slashes
 * dropped, lowercased) and the repository name, so `http://Reg:5000/` and `reg:5000` share state.
 */
export function cacheKey(registry: string, repository: string): string {
  const host = registry
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/\/+$/, '')
    .toLowerCase();
  return `${host}/${repository}`;
}
