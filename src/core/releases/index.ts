// SPDX-License-Identifier: Apache-2.0
/**
 * The pure release core: tags, ordering, release metadata, selection and rebuild detection. No
 * I/O; discovery (src/releases) feeds it what it read from the registry.
 *
 * API at a glance:
 * - `parseTag(tag)` → `{ok, version: TagVersion}` or `{ok: false, skipped: SkippedTag}`: the
 *   3-tier scheme `<app>[-rev<N>[-b<build>]]`, optional `v` on every tier. Skip codes:
 *   `MOLT_TAG_ARTIFACT` (`sha256-….sig`), `MOLT_TAG_NOT_VERSION` (`latest`), `MOLT_INVALID_TAG`
 *   (version-like but malformed: `+`, `-rev02`, `1.9.0-alpha-1`, …).
 * - `partitionTags(tags)` → `{versions, skipped}`: parse a whole tag list before any HEAD request.
 * - `parseVersion(input, what?)` → `TagVersion`; throws `MOLT_INVALID_VERSION` (for `--current`).
 * - `parseChannel(name)` → normalised name; throws `MOLT_INVALID_CHANNEL` (for `--channel`).
 * - `compareVersions(a, b)`: `(app, rev)` order; `bySpecificity`: long > intermediate > short.
 * - `compareReleases(a, b)` (oldest first, total) and `sortReleases(releases)` (newest first, for
 *   `molt releases list`); `releaseVersion(release)` is a release's ordering key.
 * - `releaseFromLabels({digest, tags, labels, signature, created?})` → `{ok, release}` or
 *   `{ok: false, skipped}` with `MOLT_INVALID_RANGE` / `MOLT_INVALID_VERSION` /
 *   `MOLT_INVALID_CHANNEL` / `MOLT_INVALID_TAG` (skip the digest, keep discovering).
 * - `selectLatest({releases, channel, current?, kubernetes?, requireSignature?})` → `Selection`:
 *   `{found: true, release, path, rejected}` or `{found: false, code: MOLT_NO_ELIGIBLE_RELEASE,
 *   reason, rejected}` (exit code 3). `rejected[]` is `{version, tag, digest, code, reason}` with a
 *   `RejectionCode`. Throws only for malformed `channel` / `current` / `kubernetes` strings.
 * - `detectMovedTags(previousTagToDigest, currentTagToDigest)` → `MovedTag[]` with `MoveKind`
 *   `Advanced` (short tag, newer revision: normal), `Rebuilt` (same version, new digest),
 *   `Reverted` (short tag moved back).
 */
export type { Release, SignatureState, SkippedTag } from './release.ts';
export { ReleaseLabel } from './release.ts';
export type { TagParse, TagVersion } from './tag.ts';
export { parseTag, parseVersion, partitionTags, TagTier } from './tag.ts';
export type { Version } from './order.ts';
export {
  bySpecificity,
  compareReleases,
  compareVersions,
  releaseVersion,
  sortReleases,
} from './order.ts';
export { parseChannel, parseChannelList } from './channel.ts';
export type { ReleaseInput, ReleaseOutcome } from './release-from-labels.ts';
export { releaseFromLabels } from './release-from-labels.ts';
export { parseKubernetesVersion, RejectionCode } from './eligibility.ts';
export type { Verdict } from './eligibility.ts';
export type { DirectOptions, Rejection, Selection, SelectOptions } from './select.ts';
export { directVerdict, selectLatest } from './select.ts';
export type { MovedTag } from './rebuilds.ts';
export { detectMovedTags, MoveKind } from './rebuilds.ts';
