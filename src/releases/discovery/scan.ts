// SPDX-License-Identifier: Apache-2.0
/** The registry-facing steps of one scan, and the cache state it leaves behind. */
import { ErrorCode } from '../../core/errors.ts';
import { bySpecificity } from '../../core/releases/order.ts';
import type { SkippedTag } from '../../core/releases/release.ts';
import { partitionTags, type TagVersion } from '../../core/releases/tag.ts';
import type { Platform, RegistryReader } from '../../oci/types.ts';
import type { ImageEntry, RepositoryState, SignatureEntry } from '../cache/types.ts';
import { readImage, readTaggedImage, tagDigestByGet, type ImageRead } from './metadata.ts';
import { mapConcurrent } from './pool.ts';
import type { DiscoveryProgress } from './types.ts';

/** What the steps of a scan share. */
export interface ScanContext {
  readonly reader: RegistryReader;
  readonly repository: string;
  readonly platform: Platform;
  readonly concurrency: number;
  readonly progress: (p: DiscoveryProgress) => void;
  /** Resolve new tags with a GET (see {@link headTags}); false for registries that meter GETs. */
  readonly getNewTags: boolean;
}

/**
 * Docker Hub counts manifest GETs against pull limits (about 100 per 6 hours anonymously) and not
 * HEADs, so there only the one GET a new release needs anyway is spent.
 */
export function metersManifestGets(registry: string | undefined): boolean {
  const host =
    (registry ?? '')
      .replace(/^[a-z]+:\/\//i, '')
      .split('/')[0]
      ?.split(':')[0] ?? '';
  return ['docker.io', 'index.docker.io', 'registry-1.docker.io'].includes(host.toLowerCase());
}

/** The tag set resolved to digests. */
export interface TagHeads {
  /** Parseable tag → digest. */
  readonly tagDigests: Readonly<Record<string, string>>;
  /** Digest → its parseable tags, most specific first (the release's identity and aliases). */
  readonly byDigest: ReadonlyMap<string, readonly TagVersion[]>;
  readonly skipped: readonly SkippedTag[];
  /** Metadata already read while resolving (new releases' representative tags), by digest. */
  readonly prefetched: ReadonlyMap<string, ImageRead>;
}

/**
 * Parse `tags`, skip the ones outside the scheme, and resolve the rest to digests.
 *
 * Every tag costs one request per scan: tags are mutable, so each must be asked where it points.
 * - A tag seen on the previous scan is HEADed: the cheap way to notice a move, and what keeps a
 *   warm scan free of GETs (metered registries such as Docker Hub count GETs, not HEADs).
 * - A tag never seen before is resolved with a manifest GET. A new tag usually means a new
 *   release whose manifest must be read anyway, and on distribution 2.8 a HEAD is the costlier
 *   request: it answers every HEAD with `Connection: close`, so each one pays a new connection
 *   (measured in benchmark P1; docs/adr/0002-release-model.md). On registries that meter GETs
 *   ({@link metersManifestGets}) new tags are HEADed instead.
 * - In every app version, the most specific new tag — a new release's long tag, or the tag a
 *   rebuild added — is resolved by reading its metadata outright (manifest, then config), so the
 *   new digest's manifest is not fetched a second time.
 */
export async function headTags(
  ctx: ScanContext,
  tags: readonly string[],
  previousTags: Readonly<Record<string, string>>,
): Promise<TagHeads> {
  const { versions, skipped } = partitionTags(tags);
  const representatives = newReleaseRepresentatives(versions, previousTags);
  const prefetched = new Map<string, ImageRead>();
  let done = 0;
  const heads = await mapConcurrent(versions, ctx.concurrency, async (v) => {
    const digest = await resolveTag(ctx, v.tag, {
      known: v.tag in previousTags,
      representative: representatives.has(v.tag),
      prefetched,
    });
    ctx.progress({ phase: 'head', done: ++done, total: versions.length });
    return digest;
  });
  const tagDigests: Record<string, string> = {};
  const byDigest = new Map<string, TagVersion[]>();
  const gone: SkippedTag[] = [];
  versions.forEach((v, i) => {
    const digest = heads[i];
    if (digest === undefined) {
      // Deleted between the listing and the HEAD: not an error, the next scan will not list it.
      gone.push({
        tag: v.tag,
        code: ErrorCode.RegistryNotFound,
        reason: 'the tag was deleted during the scan',
      });
      return;
    }
    tagDigests[v.tag] = digest;
    byDigest.set(digest, [...(byDigest.get(digest) ?? []), v]);
  });
  for (const list of byDigest.values()) list.sort(bySpecificity);
  return { tagDigests, byDigest, skipped: [...skipped, ...gone], prefetched };
}

/** One tag's digest, by the cheapest request that fits what is known about it (see {@link headTags}). */
async function resolveTag(
  ctx: ScanContext,
  tag: string,
  how: {
    readonly known: boolean;
    readonly representative: boolean;
    readonly prefetched: Map<string, ImageRead>;
  },
): Promise<string | undefined> {
  if (how.representative) {
    const read = await readTaggedImage(ctx.reader, ctx.repository, tag, ctx.platform);
    if (read !== undefined) {
      how.prefetched.set(read.digest, read.read);
      return read.digest;
    }
  } else if (!how.known && ctx.getNewTags) {
    const digest = await tagDigestByGet(ctx.reader, ctx.repository, tag);
    if (digest !== undefined) return digest;
  }
  // Known tags, and new ones whose manifest is broken: a HEAD still tells the digest to file it under.
  return (await ctx.reader.headManifest(ctx.repository, tag))?.digest;
}

/** The most specific tag, among those not in `previousTags`, of every app version. */
function newReleaseRepresentatives(
  versions: readonly TagVersion[],
  previousTags: Readonly<Record<string, string>>,
): Set<string> {
  const groups = new Map<string, TagVersion[]>();
  for (const v of versions) {
    groups.set(v.app, [...(groups.get(v.app) ?? []), v]);
  }
  const out = new Set<string>();
  for (const group of groups.values()) {
    const first = group.filter((v) => !(v.tag in previousTags)).sort(bySpecificity)[0];
    if (first !== undefined) out.add(first.tag);
  }
  return out;
}

/** Every digest's entry, and the newly read ones that may be cached. */
export interface FetchedImages {
  readonly entries: ReadonlyMap<string, ImageEntry>;
  readonly fresh: Readonly<Record<string, ImageEntry>>;
}

/**
 * Read metadata for the digests `known` lacks; the rest comes from `known`, or from what was
 * `prefetched` while resolving tags, without a request.
 */
export async function fetchMissing(
  ctx: ScanContext,
  digests: readonly string[],
  known: Readonly<Record<string, ImageEntry>>,
  prefetched: ReadonlyMap<string, ImageRead>,
): Promise<FetchedImages> {
  const entries = new Map<string, ImageEntry>();
  const fresh: Record<string, ImageEntry> = {};
  const missing: string[] = [];
  for (const d of digests) {
    const hit = known[d] ?? prefetched.get(d)?.entry;
    if (hit === undefined) missing.push(d);
    else entries.set(d, hit);
    const read = prefetched.get(d);
    if (known[d] === undefined && read?.cacheable === true) fresh[d] = read.entry;
  }
  let done = 0;
  await mapConcurrent(missing, ctx.concurrency, async (digest) => {
    const read = await readImage(ctx.reader, ctx.repository, digest, ctx.platform);
    entries.set(digest, read.entry);
    if (read.cacheable) fresh[digest] = read.entry;
    ctx.progress({ phase: 'metadata', done: ++done, total: missing.length });
  });
  return { entries, fresh };
}

/** Inputs of {@link nextState}. */
export interface NextStateInput {
  readonly previous: RepositoryState;
  readonly platform: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly fresh: Readonly<Record<string, ImageEntry>>;
  readonly verified: Readonly<Record<string, SignatureEntry>>;
}

/**
 * The state to save: this scan's tag map, and metadata for the digests still tagged. Entries of
 * digests no tag points at any more are dropped, so the cache of a busy repository stays the size
 * of its tag set instead of growing with every build ever seen.
 */
export function nextState(i: NextStateInput): RepositoryState {
  const live = new Set(Object.values(i.tags));
  const keep = <T>(
    map: Readonly<Record<string, T>>,
    digestOf: (key: string) => string,
  ): Record<string, T> =>
    Object.fromEntries(Object.entries(map).filter(([k]) => live.has(digestOf(k))));
  const images: Record<string, Record<string, ImageEntry>> = {};
  for (const [platform, entries] of Object.entries(i.previous.images))
    images[platform] = keep(entries, (d) => d);
  images[i.platform] = { ...images[i.platform], ...i.fresh };
  const sigDigest = (k: string): string => k.split(' ')[0] ?? '';
  return {
    tags: { ...i.tags },
    images,
    signatures: keep({ ...i.previous.signatures, ...i.verified }, sigDigest),
  };
}
