// SPDX-License-Identifier: Apache-2.0
/**
 * Incremental release discovery (docs/adr/0002-release-model.md; reference/oci-discovery.md §5.2).
 * One scan: list all tags → parse them (unparseable tags are skipped, never fatal) → HEAD each
 * parseable tag for its digest (a new release's first tag is resolved by GET instead, see
 * `headTags`) → fetch manifest + config only for digests the cache has not seen
 * → group tags by digest into releases → report rebuilds against the previous tag → digest map →
 * check signatures when a key is given → save the cache.
 *
 * Every tag is HEADed on every scan: tags are mutable and the registry offers no change cursor,
 * so a HEAD is the only way to see a tag move. HEADs are cheap (no body, not metered by Docker
 * Hub's pull quota); GETs are what the cache saves.
 */
import { sortReleases } from '../../core/releases/order.ts';
import { detectMovedTags, MoveKind } from '../../core/releases/rebuilds.ts';
import type { Release, SignatureState, SkippedTag } from '../../core/releases/release.ts';
import { releaseFromLabels } from '../../core/releases/release-from-labels.ts';
import type { TagVersion } from '../../core/releases/tag.ts';
import type { Platform } from '../../oci/types.ts';
import { cacheKey, type ImageEntry } from '../cache/types.ts';
import { platformKey } from './metadata.ts';
import { fetchMissing, headTags, metersManifestGets, nextState, type ScanContext } from './scan.ts';
import { signatureStates } from './signatures.ts';
import { statsDelta, statsSnapshot } from './stats.ts';
import type { DiscoverOptions, DiscoveryResult } from './types.ts';

/** The platform discovery reads labels for when none is given. */
export const defaultPlatform: Platform = { os: 'linux', architecture: 'amd64' };

/** Default number of registry requests in flight (Cincinnati's DEFAULT_FETCH_CONCURRENCY). */
export const defaultConcurrency = 16;

/**
 * Scan a release repository: every release (newest first), every skipped tag or digest with its
 * reason, the rebuilds since the last scan, and the requests made. A broken release is skipped;
 * a registry-level failure (unreachable, 401, 5xx after retries) rejects with its MoltError and
 * leaves the cache as it was.
 */
export async function discoverReleases(o: DiscoverOptions): Promise<DiscoveryResult> {
  const before = statsSnapshot(o.reader.stats);
  const ctx: ScanContext = {
    reader: o.reader,
    repository: o.repository,
    platform: o.platform ?? defaultPlatform,
    concurrency: Math.max(1, Math.floor(o.concurrency ?? defaultConcurrency)),
    progress: o.onProgress ?? (() => undefined),
    getNewTags: !metersManifestGets(o.registry),
  };
  const key = cacheKey(o.registry ?? '', o.repository);
  const loaded = await o.cache.load(key);
  const previous = loaded.state;

  const tags = await o.reader.listTags(o.repository);
  ctx.progress({ phase: 'list', done: 1, total: 1 });
  const heads = await headTags(ctx, tags, previous.tags);
  const platform = platformKey(ctx.platform);
  const images = await fetchMissing(
    ctx,
    [...heads.byDigest.keys()],
    previous.images[platform] ?? {},
    heads.prefetched,
  );
  const signatures = await signatureStates({
    reader: o.reader,
    repository: o.repository,
    publicKeyPem: o.publicKeyPem,
    digests: [...images.entries].flatMap(([d, e]) => (e.ok ? [d] : [])),
    cached: previous.signatures,
    concurrency: ctx.concurrency,
    onChecked: (done, total) => {
      ctx.progress({ phase: 'signatures', done, total });
    },
  });
  const built = buildReleases(heads.byDigest, images.entries, signatures.states);
  const state = nextState({
    previous,
    platform,
    tags: heads.tagDigests,
    fresh: images.fresh,
    verified: signatures.verified,
  });
  // A warm scan with nothing changed rewrites nothing: no fsync, no rename, no churn on the disk.
  const unchanged =
    loaded.warnings.length === 0 && JSON.stringify(state) === JSON.stringify(previous);
  const saveWarnings = unchanged ? [] : await o.cache.save(key, state);
  const moved = detectMovedTags(
    new Map(Object.entries(previous.tags)),
    new Map(Object.entries(heads.tagDigests)),
  );
  return {
    releases: sortReleases(built.releases),
    skipped: [...heads.skipped, ...built.skipped],
    moved,
    rebuilds: moved.filter((m) => m.kind === MoveKind.Rebuilt),
    requests: statsDelta(before, o.reader.stats),
    warnings: [...loaded.warnings, ...saveWarnings],
  };
}

/** Releases from digest → tags; digests whose image or labels are broken are skipped. */
function buildReleases(
  byDigest: ReadonlyMap<string, readonly TagVersion[]>,
  entries: ReadonlyMap<string, ImageEntry>,
  signatures: ReadonlyMap<string, SignatureState>,
): { releases: Release[]; skipped: SkippedTag[] } {
  const releases: Release[] = [];
  const skipped: SkippedTag[] = [];
  for (const [digest, versions] of byDigest) {
    const entry = entries.get(digest);
    const tags = versions.map((v) => v.tag);
    if (entry === undefined || !entry.ok) {
      const why = entry ?? {
        code: 'MOLT_INTERNAL',
        reason: 'no metadata was read for this digest',
      };
      skipped.push({ tag: tags[0] ?? digest, digest, code: why.code, reason: why.reason });
      continue;
    }
    const signature = signatures.get(digest) ?? { status: 'unchecked' };
    const outcome = releaseFromLabels({
      digest,
      tags,
      labels: entry.labels,
      signature,
      created: entry.created,
    });
    if (outcome.ok) releases.push(outcome.release);
    else skipped.push(outcome.skipped);
  }
  return { releases, skipped };
}
