// SPDX-License-Identifier: Apache-2.0
/**
 * Discovery of a container image repository a policy follows (docs/adr/0013 §3): the 3-tier tags
 * and their digests, which digests are multi-platform indexes and with which platforms, the
 * signature verdicts, and the tags that moved since the last scan. Incremental and digest-keyed
 * like release discovery (`discover.ts`), but reading no config blob at all — an image's labels
 * are not molt's business here:
 *
 * - a tag seen before is HEADed (the cheap way to see it move);
 * - a tag never seen is resolved with a manifest GET, which also says what the digest is;
 * - a digest never seen (a known tag moved to it) gets one manifest GET;
 * - a warm scan with nothing moved costs the tag list and one HEAD per tag: no GET.
 *
 * What a digest is never changes, so it is remembered for the life of the scanner (with when it
 * was first seen: an index's settle window counts from there, so a restart only ever delays).
 * Tags outside the scheme (`latest`, `sha256-…` signature tags) are not followed and not asked.
 */
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import type { RepositoryView } from '../../core/images/target.ts';
import { MoveKind, detectMovedTags, type MovedTag } from '../../core/releases/rebuilds.ts';
import type { SkippedTag } from '../../core/releases/release.ts';
import { partitionTags } from '../../core/releases/tag.ts';
import { isIndexType } from '../../oci/media-types.ts';
import type { Descriptor, RegistryReader, RequestStats } from '../../oci/types.ts';
import { cacheKey, type SignatureEntry } from '../cache/types.ts';
import { mapConcurrent } from './pool.ts';
import { signatureStates } from './signatures.ts';
import { statsDelta, statsSnapshot } from './stats.ts';

/** What one digest is: an index with its platforms, or a single image. */
interface DigestFacts {
  /** `os/arch[/variant]` of an index's images; undefined for a single-platform manifest. */
  readonly platforms: readonly string[] | undefined;
  readonly firstSeen: number;
}

interface RepositoryMemory {
  tags: Record<string, string>;
  readonly digests: Map<string, DigestFacts>;
  signatures: Record<string, SignatureEntry>;
}

/** One scan's view of a followed repository: what `resolveTarget` reads, plus what moved. */
export interface ImageRepositoryScan extends RepositoryView {
  /** Tags that point elsewhere than at the last scan (rebuilds, new revisions, withdrawals). */
  readonly moved: readonly MovedTag[];
  readonly rebuilds: readonly MovedTag[];
  /** Scheme tags whose manifest could not be read (broken, gone): not followed this scan. */
  readonly skipped: readonly SkippedTag[];
  /** The registry requests this scan made. */
  readonly requests: RequestStats;
}

export interface ImageScanOptions {
  readonly reader: RegistryReader;
  /** `host[:port]` the reader talks to (the memory's key with the repository). */
  readonly registry: string;
  readonly repository: string;
  /** Verify signatures against this key (cosign); none: nothing is `signed`. */
  readonly publicKeyPem?: string | undefined;
}

export interface ImageScanner {
  scan(o: ImageScanOptions): Promise<ImageRepositoryScan>;
}

/** `os/arch[/variant]` of an index entry; attestation entries (`unknown/unknown`) are not platforms. */
function platformOf(d: Descriptor): string | undefined {
  const p = d.platform;
  if (p === undefined || p.os === 'unknown' || p.architecture === 'unknown') return undefined;
  return `${p.os}/${p.architecture}${p.variant === undefined ? '' : `/${p.variant}`}`;
}

function factsOf(mediaType: string, json: unknown, now: number): DigestFacts {
  if (!isIndexType(mediaType)) return { platforms: undefined, firstSeen: now };
  const manifests = (json as { manifests?: readonly Descriptor[] }).manifests ?? [];
  const platforms = [...new Set(manifests.flatMap((m) => platformOf(m) ?? []))].sort();
  return { platforms, firstSeen: now };
}

/** Faults of one tag's manifest (broken, gone since the list): that tag is skipped, not the scan. */
const tagFaults: ReadonlySet<string> = new Set([
  ErrorCode.ManifestInvalid,
  ErrorCode.ManifestTooLarge,
  ErrorCode.UnsupportedMediaType,
  ErrorCode.DigestMismatch,
  ErrorCode.RegistryNotFound,
]);

type Indexes = RepositoryView['indexes'];

/** Resolve every scheme tag to a digest, learning what each new digest is; faults skip a tag. */
async function resolveTags(
  s: ImageScanOptions,
  mem: RepositoryMemory,
  c: { readonly concurrency: number; readonly now: () => number },
): Promise<{ tags: Map<string, string>; skipped: SkippedTag[] }> {
  const skipped: SkippedTag[] = [];
  const faulty = (tag: string, digest: string | undefined, e: unknown): void => {
    if (!isMoltError(e) || !tagFaults.has(e.code)) throw e;
    skipped.push({ tag, ...(digest !== undefined && { digest }), code: e.code, reason: e.message });
  };
  const learn = (digest: string, mediaType: string, json: unknown): void => {
    if (!mem.digests.has(digest)) mem.digests.set(digest, factsOf(mediaType, json, c.now()));
  };
  const { versions } = partitionTags(await s.reader.listTags(s.repository));
  const resolved = await mapConcurrent(versions, c.concurrency, async (v) => {
    if (v.tag in mem.tags) {
      const head = await s.reader.headManifest(s.repository, v.tag);
      return head === undefined ? undefined : ([v.tag, head.digest] as const);
    }
    try {
      const got = await s.reader.getManifest(s.repository, v.tag);
      learn(got.digest, got.mediaType, got.json);
      return [v.tag, got.digest] as const;
    } catch (e) {
      faulty(v.tag, undefined, e);
      return undefined;
    }
  });
  const found = new Map(resolved.flatMap((r) => (r === undefined ? [] : [r])));
  const unknown = [...new Set(found.values())].filter((d) => !mem.digests.has(d));
  await mapConcurrent(unknown, c.concurrency, async (digest) => {
    try {
      const got = await s.reader.getManifest(s.repository, digest);
      learn(digest, got.mediaType, got.json);
    } catch (e) {
      for (const [tag, d] of found) if (d === digest) faulty(tag, digest, e);
    }
  });
  return { tags: new Map([...found].filter(([, d]) => mem.digests.has(d))), skipped };
}

function indexesOf(digests: Iterable<string>, mem: RepositoryMemory): Indexes {
  const out = new Map<string, { platforms: readonly string[]; firstSeen: number }>();
  for (const d of digests) {
    const f = mem.digests.get(d);
    if (f?.platforms !== undefined) out.set(d, { platforms: f.platforms, firstSeen: f.firstSeen });
  }
  return out;
}

/** A scanner that remembers what it learnt per repository between scans (one per operator). */
export function createImageScanner(o: {
  readonly now: () => number;
  /** Registry requests in flight per scan. @default 16 */
  readonly concurrency?: number;
}): ImageScanner {
  const memory = new Map<string, RepositoryMemory>();
  const concurrency = Math.max(1, Math.floor(o.concurrency ?? 16));

  return {
    async scan(s) {
      const before = statsSnapshot(s.reader.stats);
      const key = cacheKey(s.registry, s.repository);
      const mem = memory.get(key) ?? { tags: {}, digests: new Map(), signatures: {} };
      const { tags, skipped } = await resolveTags(s, mem, { concurrency, now: o.now });
      const digests = [...new Set(tags.values())];
      const signatures = await signatureStates({
        reader: s.reader,
        repository: s.repository,
        publicKeyPem: s.publicKeyPem,
        digests,
        cached: mem.signatures,
        concurrency,
      });
      const moved = detectMovedTags(new Map(Object.entries(mem.tags)), tags);
      mem.tags = Object.fromEntries(tags);
      mem.signatures = signatures.verified;
      memory.set(key, mem);
      const signed = [...signatures.states].filter(([, st]) => st.status === 'verified');
      return {
        tags,
        indexes: indexesOf(digests, mem),
        signed: new Set(signed.map(([d]) => d)),
        moved,
        rebuilds: moved.filter((m) => m.kind === MoveKind.Rebuilt),
        skipped,
        requests: statsDelta(before, s.reader.stats),
      };
    },
  };
}
