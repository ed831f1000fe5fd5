// SPDX-License-Identifier: Apache-2.0
/**
 * Moved tags between two polls. Tags are mutable, so discovery keeps the previous tag → digest map
 * and compares it with the new one (reference/oci-discovery.md §5.2). Under the 3-tier scheme a
 * short tag (`1.8.0`) moving to a newer revision is how releases advance; an intermediate tag
 * (`1.8.0-rev2`) or a long tag moving means the same version was rebuilt — a new build that a
 * version-only comparison would never notice, because `(app, rev)` did not change.
 */
import { compareVersions, bySpecificity } from './order.ts';
import { partitionTags, parseTag, TagTier } from './tag.ts';
import type { TagVersion } from './tag.ts';

/** How a moved tag is read. */
export const MoveKind = {
  /** A short tag now points at a newer `(app, rev)`: the normal way a release advances. */
  Advanced: 'Advanced',
  /** Same `(app, rev)`, new digest: an intermediate or long tag moved, or a short tag moved sideways. */
  Rebuilt: 'Rebuilt',
  /** A short tag now points at an older `(app, rev)`: a revision was withdrawn. */
  Reverted: 'Reverted',
} as const;
/** One of {@link MoveKind}. */
export type MoveKind = (typeof MoveKind)[keyof typeof MoveKind];

/** A scheme tag whose digest changed between two polls. */
export interface MovedTag {
  readonly tag: string;
  readonly from: string;
  readonly to: string;
  readonly kind: MoveKind;
}

/**
 * Compares two tag → digest maps and returns the scheme tags that point at a different digest,
 * sorted by tag. Added, removed and non-scheme tags (`latest`) are not moves and are left out. A
 * short tag's move is judged by the most specific tag of each digest: in `previous` for the old
 * digest, in `current` for the new one.
 */
export function detectMovedTags(
  previous: ReadonlyMap<string, string>,
  current: ReadonlyMap<string, string>,
): MovedTag[] {
  const before = versionsByDigest(previous);
  const after = versionsByDigest(current);
  const moved: MovedTag[] = [];
  for (const [tag, to] of current) {
    const from = previous.get(tag);
    const parsed = parseTag(tag);
    if (from === undefined || from === to || !parsed.ok) continue;
    const kind =
      parsed.version.tier === TagTier.Short
        ? judgeShort(before.get(from), after.get(to))
        : MoveKind.Rebuilt;
    moved.push({ tag, from, to, kind });
  }
  return moved.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
}

function judgeShort(from: TagVersion | undefined, to: TagVersion | undefined): MoveKind {
  // Both are defined: the moved short tag itself points at each digest in its own map.
  const order = from === undefined || to === undefined ? 0 : compareVersions(to, from);
  return order > 0 ? MoveKind.Advanced : order < 0 ? MoveKind.Reverted : MoveKind.Rebuilt;
}

/** Each digest's most specific scheme tag. */
function versionsByDigest(tags: ReadonlyMap<string, string>): Map<string, TagVersion> {
  const best = new Map<string, TagVersion>();
  for (const version of partitionTags(tags.keys()).versions) {
    const digest = tags.get(version.tag);
    const known = digest === undefined ? undefined : best.get(digest);
    if (digest !== undefined && (known === undefined || bySpecificity(version, known) < 0)) {
      best.set(digest, version);
    }
  }
  return best;
}
