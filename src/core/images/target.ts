// SPDX-License-Identifier: Apache-2.0
/**
 * What a followed container should run next (docs/adr/0013 decisions 1, 3, 5): a pure reading of
 * the policy, the image as written and what discovery knows of the repository now. Rules, in order:
 *
 * 1. The image is read with `parseImageReference`; its `registry/repository` must be the policy's
 *    `repository`, else `skip` NotFollowed (an unreadable image too).
 * 2. Its current digest is the `@digest` it names, else the digest its tag has now; when neither
 *    is known any target differs, so the container is moved to pin it by digest.
 * 3. A current digest listed in `gm` is never replaced: `skip` GMPinned with the pin's reason
 *    (and, in `wouldMoveTo`, the target it would have taken, so the planner shows it `Pinned`).
 * 4. The followed tag (`followed-tag.ts`): `rebuilds` the intermediate `<app>-rev<N>` the container
 *    runs (a long tag's `-b<build>` dropped; a short tag `skip` ShortTag, outside the scheme `skip`
 *    NotThreeTier, no tag `skip` NoTag); `revisions` its short `<app>`; `semver` the highest short
 *    tag whose app version satisfies the range, by (app, rev).
 * 5. The followed tag absent from the repository: `wait` TagMissing. Its digest the current one:
 *    `current`.
 * 6. `requireSignature` and the target digest not signed: `wait` Unsigned.
 * 7. A multi-platform index lacking a platform of `policy.platforms ?? ctx.platforms` waits
 *    (`wait` PlatformsMissing, naming them and when the settle ends) until `settleMs` (1 h) after
 *    it was first seen; then it is taken, `missingPlatforms` saying what it lacks. A platform
 *    without a variant (a Node's `linux/arm64`) is carried by any variant of it (`linux/arm64/v8`).
 * 8. Otherwise `move`: the tag written is the newest intermediate tag pointing at the target
 *    digest, else the followed tag; `image` is `repository:tag@digest`; `from` the current digest.
 */
import { isMoltError } from '../errors.ts';
import { parseImageReference, type ImageReference } from '../slots/reference.ts';
import { instant } from '../time.ts';
import { followedTag, intermediateAt } from './followed-tag.ts';
import type { GmPin, ImagePolicy } from './types.ts';

/** What discovery knows of one repository now (the operator fills it from its OCI discovery). */
export interface RepositoryView {
  /** Tag → digest (manifest or index). */
  readonly tags: ReadonlyMap<string, string>;
  /** Digests that are multi-platform indexes: their platforms (`os/arch[/variant]`) and when first seen (epoch ms). */
  readonly indexes: ReadonlyMap<
    string,
    { readonly platforms: readonly string[]; readonly firstSeen: number }
  >;
  /** Digests with a valid signature (only read when the policy requires signatures). */
  readonly signed: ReadonlySet<string>;
}

/** A tag and the digest it points at. */
export interface TagTarget {
  readonly tag: string;
  readonly digest: string;
}

export type TargetDecision =
  /** Nothing newer. */
  | { readonly kind: 'current'; readonly digest: string }
  | {
      readonly kind: 'move';
      readonly tag: string;
      readonly digest: string;
      /** `repository:tag@digest`, as written into the pod template. */
      readonly image: string;
      /** The digest the container runs now, when known (a tag discovery has not seen: unknown). */
      readonly from?: string;
      /** Platforms the index lacks, taken anyway after the settle. */
      readonly missingPlatforms?: readonly string[];
    }
  /** PlatformsMissing, Unsigned, TagMissing: may change by itself. */
  | { readonly kind: 'wait'; readonly reason: string; readonly message: string }
  /** GMPinned, NotFollowed, NotThreeTier, NoTag, ShortTag: a person has to change something. */
  | {
      readonly kind: 'skip';
      readonly reason: string;
      readonly message: string;
      /** GMPinned only: the pin that keeps the container. */
      readonly pin?: GmPin;
      /** GMPinned only: the target the container would move to were it not pinned. */
      readonly wouldMoveTo?: TagTarget;
    };

export interface TargetContext {
  /** The platforms (`os/arch[/variant]`) of the cluster's Nodes. */
  readonly platforms: readonly string[];
  readonly now: number;
}

/** How long an index missing a platform waits after first seen, unless the policy says. */
export const DEFAULT_SETTLE_MS = 3_600_000;

/** See the module comment for the rules. */
export function resolveTarget(
  policy: ImagePolicy,
  image: string,
  repo: RepositoryView,
  ctx: TargetContext,
): TargetDecision {
  const ref = readReference(image);
  if (ref === undefined || `${ref.registry}/${ref.repository}` !== policy.repository) {
    const message = `${image} is not in ${policy.repository}`;
    return { kind: 'skip', reason: 'NotFollowed', message };
  }
  const current = ref.digest ?? (ref.tag === undefined ? undefined : repo.tags.get(ref.tag));
  const decision = unpinned({ policy, repo, ctx }, ref, current);
  const pin = policy.gm.find((p) => p.digest === current);
  if (pin === undefined) return decision;
  return {
    kind: 'skip',
    reason: 'GMPinned',
    message: `${pin.digest} is a GM image, kept for good: ${pin.reason}`,
    pin,
    ...(decision.kind === 'move' && {
      wouldMoveTo: { tag: decision.tag, digest: decision.digest },
    }),
  };
}

function readReference(image: string): ImageReference | undefined {
  try {
    return parseImageReference(image);
  } catch (e) {
    if (isMoltError(e)) return undefined;
    throw e;
  }
}

/** What one resolution reads. */
interface Reading {
  readonly policy: ImagePolicy;
  readonly repo: RepositoryView;
  readonly ctx: TargetContext;
}

/** Rules 4–8: the decision were the current digest not a GM pin. */
function unpinned(r: Reading, ref: ImageReference, current: string | undefined): TargetDecision {
  const { policy, repo } = r;
  const followed = followedTag(policy.follow, ref.tag, repo.tags.keys());
  if (!followed.ok) {
    const kind = followed.reason === 'TagMissing' ? 'wait' : 'skip';
    return { kind, reason: followed.reason, message: followed.message };
  }
  const digest = repo.tags.get(followed.tag);
  if (digest === undefined) {
    const message = `tag ${followed.tag} is not in ${policy.repository}`;
    return { kind: 'wait', reason: 'TagMissing', message };
  }
  if (digest === current) return { kind: 'current', digest };
  const missing = missingPlatforms(policy.platforms ?? r.ctx.platforms, repo, digest);
  const waiting = waitFor(r, { tag: followed.tag, digest }, missing);
  if (waiting !== undefined) return waiting;
  const tag = intermediateAt(repo.tags, digest) ?? followed.tag;
  return {
    kind: 'move',
    tag,
    digest,
    image: `${policy.repository}:${tag}@${digest}`,
    ...(current !== undefined && { from: current }),
    ...(missing !== undefined && { missingPlatforms: missing.platforms }),
  };
}

/** Rules 6–7: a target not signed, or an index missing platforms within its settle, waits. */
function waitFor(
  { policy, repo, ctx }: Reading,
  target: TagTarget,
  missing: Missing | undefined,
): TargetDecision | undefined {
  const what = `${target.tag} (${target.digest})`;
  if (policy.requireSignature === true && !repo.signed.has(target.digest)) {
    return { kind: 'wait', reason: 'Unsigned', message: `${what} has no valid signature` };
  }
  if (missing === undefined) return undefined;
  const ends = missing.firstSeen + (policy.settleMs ?? DEFAULT_SETTLE_MS);
  if (ctx.now >= ends) return undefined;
  const message = `${what} lacks ${missing.platforms.join(', ')}; taken anyway at ${instant(ends)} unless they appear`;
  return { kind: 'wait', reason: 'PlatformsMissing', message };
}

interface Missing {
  readonly platforms: readonly string[];
  readonly firstSeen: number;
}

/** The required platforms an index lacks (undefined: not an index, or it has them all). */
function missingPlatforms(
  required: readonly string[],
  repo: RepositoryView,
  digest: string,
): Missing | undefined {
  const index = repo.indexes.get(digest);
  if (index === undefined) return undefined;
  const platforms = required.filter((p) => !index.platforms.some((have) => carries(have, p)));
  return platforms.length === 0 ? undefined : { platforms, firstSeen: index.firstSeen };
}

/** `linux/arm64/v8` carries `linux/arm64/v8` and `linux/arm64`; `linux/arm64` carries only itself. */
const carries = (have: string, want: string): boolean =>
  have === want || (want.split('/').length === 2 && have.startsWith(`${want}/`));
