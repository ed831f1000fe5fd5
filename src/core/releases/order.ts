// SPDX-License-Identifier: Apache-2.0
/**
 * Ordering of versions, tags and releases. Releases are ordered by version — `(app, rev)` with
 * semver for `app` and numbers for `rev` — never by tag-list order or `created` (both lie: tag
 * lists are lexical or unsorted, `created` may be 1970; reference/oci-discovery.md §4, §5.4).
 */
import { compare } from 'semver';
import { ErrorCode, MoltError } from '../errors.ts';
import type { Release } from './release.ts';
import { parseTag, TagTier } from './tag.ts';
import type { TagVersion } from './tag.ts';

/** The part of a version that orders: the app version and the image revision. */
export interface Version {
  readonly app: string;
  readonly rev: number;
}

/**
 * Compares `(app, rev)`: semver on the app (pre-releases below their release), then the revision
 * numerically (rev10 above rev9, `1.8.0-rev2` above `1.8.0`). Build ids do not take part. Returns
 * a negative number, 0 or a positive number, like `Array.prototype.sort` expects.
 */
export function compareVersions(a: Version, b: Version): number {
  return compare(a.app, b.app) || Math.sign(a.rev - b.rev);
}

const TIER_RANK: Readonly<Record<TagTier, number>> = {
  [TagTier.Long]: 2,
  [TagTier.Intermediate]: 1,
  [TagTier.Short]: 0,
};

/**
 * Orders tags most specific first: long, then intermediate, then short; within a tier the newer
 * version first, then by text so the result is deterministic.
 */
export function bySpecificity(a: TagVersion, b: TagVersion): number {
  return (
    TIER_RANK[b.tier] - TIER_RANK[a.tier] ||
    compareVersions(b, a) ||
    (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0)
  );
}

/**
 * The ordering key of a release: its most specific tag ({@link Release.tag}), read with the scheme.
 * Throws `MOLT_INVALID_TAG` for a hand-built release whose tag is outside the scheme.
 */
export function releaseVersion(r: Release): TagVersion {
  const parsed = parseTag(r.tag);
  if (parsed.ok) return parsed.version;
  throw new MoltError(
    ErrorCode.InvalidTag,
    `release ${r.digest} has tag "${r.tag}", which is not a version: ${parsed.skipped.reason}`,
  );
}

/**
 * Total order on releases, oldest first. Ties on `(app, rev)` happen after a rebuild: the old build
 * keeps only its long tag while the short/intermediate tags move to the new digest, so the digest
 * that still carries a short or intermediate tag is the newer build. Last resort: the digest text,
 * so sorting is deterministic whatever order the registry listed tags in.
 */
export function compareReleases(a: Release, b: Release): number {
  return compareKeys(keyOf(a), keyOf(b));
}

/** The releases newest first (a new array), as `molt releases list` shows them. */
export function sortReleases(releases: readonly Release[]): Release[] {
  return releases
    .map(keyOf)
    .sort((a, b) => compareKeys(b, a))
    .map((k) => k.release);
}

interface Key {
  readonly release: Release;
  readonly version: TagVersion;
  /** Whether a short or intermediate tag points here, i.e. this is the current build. */
  readonly current: boolean;
}

function keyOf(release: Release): Key {
  const current = release.tags.some((t) => {
    const parsed = parseTag(t);
    return parsed.ok && parsed.version.tier !== TagTier.Long;
  });
  return { release, version: releaseVersion(release), current };
}

function compareKeys(a: Key, b: Key): number {
  const [da, db] = [a.release.digest, b.release.digest];
  return (
    compareVersions(a.version, b.version) ||
    Number(a.current) - Number(b.current) ||
    (da < db ? -1 : da > db ? 1 : 0)
  );
}
