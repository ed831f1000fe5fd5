// SPDX-License-Identifier: Apache-2.0
/**
 * Which tag a followed container tracks (docs/adr/0013 decision 1), read from the tag it runs with
 * the 3-tier scheme (`core/releases/tag.ts`): `rebuilds` the intermediate `<app>-rev<N>` (a long
 * tag's `-b<build>` dropped), `revisions` the short `<app>`, `semver` the highest short tag in the
 * range. Tags are cut from the text as written, so a `v` prefix stays what the registry lists.
 */
import { satisfies } from 'semver';
import { compareVersions } from '../releases/order.ts';
import { parseTag, TagTier, type TagVersion } from '../releases/tag.ts';
import type { ImageFollow } from './types.ts';

/** The scheme, as messages name it. */
export const SCHEME = '<app>-rev<N>[-b<build>]';

export type Followed =
  | { readonly ok: true; readonly tag: string }
  | { readonly ok: false; readonly reason: string; readonly message: string };

const no = (reason: string, message: string): Followed => ({ ok: false, reason, message });

/** The tag `follow` tracks for a container running `tag` (undefined: digest only), among `tags`. */
export function followedTag(
  follow: ImageFollow,
  tag: string | undefined,
  tags: Iterable<string>,
): Followed {
  if (follow.kind === 'semver') return highestInRange(follow.range, tags);
  if (tag === undefined) {
    return no('NoTag', 'the container names a digest only: no tag says what it follows');
  }
  const parsed = parseTag(tag);
  if (!parsed.ok) {
    return no(
      'NotThreeTier',
      `tag "${tag}" is not in the scheme ${SCHEME}: ${parsed.skipped.reason}`,
    );
  }
  const v = parsed.version;
  if (follow.kind === 'revisions') return { ok: true, tag: shortOf(v) };
  if (v.tier === TagTier.Short) {
    return no(
      'ShortTag',
      `tag "${tag}" is a short tag: rebuilds follow ${SCHEME}; use follow: revisions`,
    );
  }
  return { ok: true, tag: intermediateOf(v) };
}

/** `1.8.0-rev2-b7` → `1.8.0-rev2`; an intermediate tag as is. */
function intermediateOf(v: TagVersion): string {
  return v.tier === TagTier.Long ? v.tag.slice(0, v.tag.lastIndexOf('-b')) : v.tag;
}

/** `1.8.0-rev2[-b7]` → `1.8.0`: the first `-rev` is the suffix (a pre-release never holds `-`). */
function shortOf(v: TagVersion): string {
  return v.tier === TagTier.Short ? v.tag : v.tag.slice(0, v.tag.indexOf('-rev'));
}

/** Newer by (app, rev); between equals the smaller text, so the pick never depends on listing order. */
const beats = (v: TagVersion, best: TagVersion | undefined): boolean =>
  best === undefined || (compareVersions(v, best) || (v.tag < best.tag ? 1 : -1)) > 0;

/** The newest short tag whose app version satisfies `range`; ties (`v1.8.0`, `1.8.0`) by text. */
function highestInRange(range: string, tags: Iterable<string>): Followed {
  let best: TagVersion | undefined;
  for (const tag of tags) {
    const p = parseTag(tag);
    if (!p.ok || p.version.tier !== TagTier.Short || !satisfies(p.version.app, range)) continue;
    if (beats(p.version, best)) best = p.version;
  }
  if (best === undefined) return no('TagMissing', `no short tag satisfies ${range}`);
  return { ok: true, tag: best.tag };
}

/** The newest intermediate tag among `tags` (an index: tag → digest) pointing at `digest`. */
export function intermediateAt(
  tags: ReadonlyMap<string, string>,
  digest: string,
): string | undefined {
  let best: TagVersion | undefined;
  for (const [tag, d] of tags) {
    if (d !== digest) continue;
    const p = parseTag(tag);
    if (!p.ok || p.version.tier !== TagTier.Intermediate) continue;
    if (beats(p.version, best)) best = p.version;
  }
  return best?.tag;
}
