// SPDX-License-Identifier: Apache-2.0
/**
 * The release tag scheme (reference/oci-discovery.md §5.4). One build is published under up to
 * three tags sharing one digest:
 *
 * | tier         | shape                          | example            | moves?                     |
 * |--------------|--------------------------------|--------------------|----------------------------|
 * | short        | `<app>`                        | `1.8.0`            | to the newest revision     |
 * | intermediate | `<app>-rev<N>`                 | `1.8.0-rev2`       | only on a rebuild          |
 * | long         | `<app>-rev<N>-b<build>`        | `1.8.0-rev2-b1042` | never                      |
 *
 * `<app>` is a semver version without build metadata whose pre-release has no `-` and does not
 * start with `rev` or `b<digit>`: those are reserved, because a looser grammar silently reads
 * `1.8.0-rev2` as the pre-release `1.8.0-rev2` and reintroduces semver's mis-sort (rev2 < 1.8.0,
 * rev10 < rev9). A build id is `[0-9A-Za-z]+` in dot-separated parts (`b1042`, `b5.1` as the Open
 * Build Service numbers builds); it is identity, never order.
 *
 * **Leading `v`.** The issue allows `v1.9.0` for semver tags (§5.4 rejects it; we follow the issue).
 * Every short tag *is* a semver tag and the other tiers only append suffixes, so one rule applies to
 * all tiers: an optional lowercase `v` is accepted and stripped (`v1.8.0-rev2` orders exactly like
 * `1.8.0-rev2`). Allowing it on short tags only would make a `v`-prefixed project's rebuilds vanish.
 */
import { valid } from 'semver';
import { ErrorCode, MoltError } from '../errors.ts';
import type { SkippedTag } from './release.ts';

/** How specific a tag is: which of the three tiers it belongs to. */
export const TagTier = { Short: 'short', Intermediate: 'intermediate', Long: 'long' } as const;
/** One of {@link TagTier}. */
export type TagTier = (typeof TagTier)[keyof typeof TagTier];

/** A tag (or version string) read with the scheme. Ordering uses `app` then `rev` only. */
export interface TagVersion {
  /** The text as given, `v` included. */
  readonly tag: string;
  /** Canonical semver of the application (`v` stripped, no build metadata). */
  readonly app: string;
  /** Image revision; 0 when absent, so `1.8.0` and `1.8.0-rev0` order as equal. */
  readonly rev: number;
  /** Build id of a long tag, without the `b`. */
  readonly build: string | undefined;
  readonly tier: TagTier;
}

/** The result of {@link parseTag}: a version, or why the tag is skipped (never fatal). */
export type TagParse =
  | { readonly ok: true; readonly version: TagVersion }
  | { readonly ok: false; readonly skipped: SkippedTag };

const SCHEME =
  /^v?(?<app>(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-(?!rev)(?!b\d)[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)(?:-rev(?<rev>0|[1-9]\d*)(?:-b(?<build>[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*))?)?$/;
/** cosign `.sig`/`.att`/`.sbom` tags and the referrers tag schema (`sha256-<hex>`). */
const ARTIFACT = /^[a-z0-9]+-[0-9a-f]{32,}(?:\.[A-Za-z0-9]+)?$|\.(?:sig|att|sbom)$/;
const VERSION_LIKE = /^[vV]?\d/;
/** OCI tags are at most 128 characters (distribution-spec tag grammar). */
const MAX_TAG_LENGTH = 128;
const SCHEME_TEXT = '<app>[-rev<N>[-b<build>]]';

/** Reads `tag` with the scheme; tags that do not fit are reported with a code and a reason. */
export function parseTag(tag: string): TagParse {
  const groups = tag.length <= MAX_TAG_LENGTH ? SCHEME.exec(tag)?.groups : undefined;
  const app = groups?.['app'];
  if (groups === undefined || app === undefined) return skip(tag, classify(tag));
  const canonical = valid(app);
  if (canonical === null) {
    return skip(tag, invalid(`the app version "${app}" is not valid semver`));
  }
  const { rev: revText, build } = groups;
  const rev = revText === undefined ? 0 : Number(revText);
  if (!Number.isSafeInteger(rev))
    return skip(tag, invalid(`revision ${String(revText)} is too large`));
  return { ok: true, version: { tag, app: canonical, rev, build, tier: tierOf(revText, build) } };
}

function tierOf(rev: string | undefined, build: string | undefined): TagTier {
  if (rev === undefined) return TagTier.Short;
  return build === undefined ? TagTier.Intermediate : TagTier.Long;
}

/**
 * Reads a version given by a person or a label (`--current 1.8.0-rev2`, `v1.9.0`), with the same
 * grammar as tags. Throws `MOLT_INVALID_VERSION` for anything else.
 */
export function parseVersion(input: string, what = 'version'): TagVersion {
  const parsed = parseTag(input.trim());
  if (parsed.ok) return parsed.version;
  throw new MoltError(
    ErrorCode.InvalidVersion,
    `${what} "${input}" is not a version: ${parsed.skipped.reason}`,
    { hint: `use ${SCHEME_TEXT}, for example 1.8.0, 1.8.0-rev2 or 1.8.0-rev2-b1042` },
  );
}

/** Parses every tag once (duplicates dropped), splitting versions from skipped tags. */
export function partitionTags(tags: Iterable<string>): {
  readonly versions: readonly TagVersion[];
  readonly skipped: readonly SkippedTag[];
} {
  const versions: TagVersion[] = [];
  const skipped: SkippedTag[] = [];
  for (const tag of new Set(tags)) {
    const parsed = parseTag(tag);
    if (parsed.ok) versions.push(parsed.version);
    else skipped.push(parsed.skipped);
  }
  return { versions, skipped };
}

interface Why {
  readonly code: ErrorCode;
  readonly reason: string;
}

const skip = (tag: string, why: Why): TagParse => ({ ok: false, skipped: { tag, ...why } });
const invalid = (reason: string): Why => ({ code: ErrorCode.InvalidTag, reason });

/** Why a tag failed the grammar, as specifically as cheap checks allow. */
function classify(tag: string): Why {
  if (ARTIFACT.test(tag)) {
    return {
      code: ErrorCode.TagArtifact,
      reason: 'a signature, attestation, SBOM or referrers-index tag, not a release',
    };
  }
  if (!VERSION_LIKE.test(tag)) {
    return { code: ErrorCode.TagNotVersion, reason: `not a version (expected ${SCHEME_TEXT})` };
  }
  return invalid(versionLikeReason(tag));
}

const REASONS: readonly (readonly [RegExp, string])[] = [
  [/\+/, "'+' is not allowed in tags; write a build as -rev<N>-b<build>"],
  [/^.{129}/s, `longer than ${MAX_TAG_LENGTH} characters`],
  [/^V/, "only a lowercase 'v' prefix is accepted"],
  [/-rev0\d/, 'the revision has a leading zero (write -rev2, not -rev02)'],
  [/-rev(?!\d)/, "'-rev' is reserved for the image revision and must be followed by a number"],
  [/^(?:(?!-rev\d).)*-b\d/, "a '-b<build>' suffix must follow '-rev<N>'"],
  [
    /^v?(?!(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:$|-))/,
    'the app version must be MAJOR.MINOR.PATCH without leading zeros',
  ],
];

function versionLikeReason(tag: string): string {
  const hit = REASONS.find(([re]) => re.test(tag));
  return (
    hit?.[1] ??
    `does not match ${SCHEME_TEXT} (pre-release identifiers may not contain '-', which is ` +
      'reserved for the -rev and -b suffixes)'
  );
}
