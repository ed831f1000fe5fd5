// SPDX-License-Identifier: Apache-2.0
/** The registry-facing steps of one scan, and the cache state it leaves behind. */
import { ErrorCode } from '../../core/errors.ts';
import { bySpecificity } from '../../core/releases/order.ts';
import type { SkippedTag } from '../../core/releases/release.ts';
import { partitionTags, type TagVersion } from '../../core/releases/tag.ts';
import type { Platform, RegistryReader } from '../../oci/types.ts';
import type { ImageEntry, RepositoryState, SignatureEntry } from '../cache/types.ts';
import { readImage } from './metadata.ts';
import { mapConcurrent } from './pool.ts';
import type { DiscoveryProgress } from './types.ts';

/** What the steps of a scan share. */
export interface ScanContext {
  readonly reader: RegistryReader;
  readonly repository: string;
  readonly platform: Platform;
  readonly concurrency: number;
  readonly progress: (p: DiscoveryProgress) => void;
}

/** The tag set resolved to digests. */
export interface TagHeads {
  /** Parseable tag → digest. */
  readonly tagDigests: Readonly<Record<string, string>>;
  /** Digest → its parseable tags, most specific first (the release's identity and aliases). */
  readonly byDigest: ReadonlyMap<string, readonly TagVersion[]>;
  readonly skipped: readonly SkippedTag[];
}

/** Parse `tags`, skip the ones outside the scheme, and HEAD the rest for their digests. */
export async function headTags(ctx: ScanContext, tags: readonly string[]): Promise<TagHeads> {
  const { versions, skipped } = partitionTags(tags);
  let done = 0;
  const heads = await mapConcurrent(versions, ctx.concurrency, async (v) => {
    const head = await ctx.reader.headManifest(ctx.repository, v.tag);
    ctx.progress({ phase: 'head', done: ++done, total: versions.length });
    return head?.digest;
  });
  const tagDigests: Record<string, string> = {};
  const byDigest = new Map<string, TagVersion[]>();
  const gone: SkippedTag[] = [];
  versions.forEach((v, i) => {
    const digest = heads[i];
    if (digest === undefined) {
      // Deleted between the listing and the HEAD: not an error, the next scan will not list it.
      gone.push({ tag: v.tag, code: ErrorCode.RegistryNotFound, reason: 'the tag was deleted during the scan' });
      return;
    }
    tagDigests[v.tag] = digest;
    byDigest.set(digest, [...(byDigest.get(digest) ?? []), v]);
  });
  for (const list of byDigest.values()) list.sort(bySpecificity);
  return { tagDigests, byDigest, skipped: [...skipped, ...gone] };
}

/** Every digest's entry, and the newly read ones that may be cached. */
export interface FetchedImages {
  readonly entries: ReadonlyMap<string, ImageEntry>;
  readonly fresh: Readonly<Record<string, ImageEntry>>;
}

/** Read metadata for the digests `known` lacks; the rest comes from `known` without a request. */
export async function fetchMissing(
  ctx: ScanContext,
  digests: readonly string[],
  known: Readonly<Record<string, ImageEntry>>,
): Promise<FetchedImages> {
  const entries = new Map<string, ImageEntry>();
  const missing: string[] = [];
  for (const d of digests) {
    const hit = known[d];
    if (hit === undefined) missing.push(d);
    else entries.set(d, hit);
  }
  const fresh: Record<string, ImageEntry> = {};
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
  const keep = <T>(map: Readonly<Record<string, T>>, digestOf: (key: string) => string): Record<string, T> =>
    Object.fromEntries(Object.entries(map).filter(([k]) => live.has(digestOf(k))));
  const images: Record<string, Record<string, ImageEntry>> = {};
  for (const [platform, entries] of Object.entries(i.previous.images)) images[platform] = keep(entries, (d) => d);
  images[i.platform] = { ...images[i.platform], ...i.fresh };
  const sigDigest = (k: string): string => k.split(' ')[0] ?? '';
  return { tags: { ...i.tags }, images, signatures: keep({ ...i.previous.signatures, ...i.verified }, sigDigest) };
}
