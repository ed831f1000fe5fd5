// SPDX-License-Identifier: Apache-2.0
/**
 * Which image rollouts exist (docs/adr/0013 decision 9): the records the driver writes before it
 * plans. Pure: the policy's units and their decisions in, rollouts to create, supersede or pause
 * out.
 *
 * - One rollout per (policy, tag, digest), id {@link imageRolloutId}, in pool `<policy>/<tag>`
 *   (`plan-input.ts`). It is created when a unit moves to a target no rollout of the policy ever
 *   had (by tag and digest); a target whose rollout halted, was cancelled or superseded, or that a
 *   person rolled back, is never offered again ({@link refusesTarget}: its units wait); one whose
 *   rollout completed gets a repair rollout (`-r<n>`, `repairOf`) when a unit moves there again
 *   (a new workload, an edit back).
 * - A new rollout supersedes the live rollouts of its pool: a newer digest of the same tag wins,
 *   as a newer release does for machines, and so does a tag moving while a rollback runs.
 * - A live forward rollout whose tag is gone from the registry pauses (`MOLT_IMAGE_MISSING`):
 *   workloads are not moved to an image that cannot be pulled, and a person decides.
 */
import { ErrorCode } from '../errors.ts';
import type { Rollout } from '../rollout/types.ts';
import { isEnded } from '../rollout/vocabulary.ts';
import type { PlanningInput } from './plan-input.ts';
import type { RepositoryView, TargetDecision } from './target.ts';
import type { ImagePolicy } from './types.ts';
import type { ImageUnit } from './units.ts';

/** `img-<policy>-<tag>-<first 8 hex of the digest>`. */
export function imageRolloutId(policy: string, tag: string, digest: string): string {
  const hex = digest.slice(digest.indexOf(':') + 1);
  return `img-${policy}-${tag}-${hex.slice(0, 8)}`;
}

/** Moving, or waiting on a person, but not over: what the image planner plans. */
export const isLive = (r: Rollout): boolean => r.state !== 'Completed' && !isEnded(r.state);

/**
 * Whether `r`'s target is never offered again: it halted, was cancelled or superseded, or a person
 * rolled it back after it completed (`all` holds its rollback). That digest was judged; a newer one
 * is offered as usual.
 */
export const refusesTarget = (r: Rollout, all: readonly Rollout[]): boolean =>
  r.state === 'Halted' ||
  (r.state !== 'Completed' && isEnded(r.state)) ||
  all.some((x) => x.rollbackOf === r.id);

export interface RolloutChanges {
  readonly create: readonly Rollout[];
  readonly supersede: readonly { readonly rollout: string; readonly reason: string }[];
  /** Live forward rollouts whose tag is gone (pause them with the reason). */
  readonly missing: readonly { readonly rollout: string; readonly reason: string }[];
}

export interface PolicyState {
  readonly policy: ImagePolicy;
  readonly units: readonly ImageUnit[];
  readonly decisions: ReadonlyMap<string, TargetDecision>;
  /** Undefined: the repository could not be read this pass (nothing is judged missing). */
  readonly scan: RepositoryView | undefined;
  /** Every rollout of this policy the store holds (any state). */
  readonly rollouts: readonly Rollout[];
  readonly now: number;
}

/** The tag and digest the first moving unit ran, for history and the fleet rollback view. */
function fromOf(pool: string, input: PlanningInput): Rollout['from'] | undefined {
  for (const m of input.machines) {
    if (m.pool !== pool || m.pin !== undefined || m.digest === undefined) continue;
    return { version: m.version ?? '', digest: m.digest };
  }
  return undefined;
}

/** The rollout to create for `pool`'s target, or undefined (one exists, or the target was refused). */
function toCreate(s: PolicyState, pool: string, input: PlanningInput): Rollout | undefined {
  const t = input.targets.get(pool);
  if (t === undefined) return undefined;
  const id = imageRolloutId(s.policy.name, t.tag, t.digest);
  const same = s.rollouts
    .filter(
      (r) =>
        r.rollbackOf === undefined && r.target.version === t.tag && r.target.digest === t.digest,
    )
    .sort((a, b) => a.createdAt - b.createdAt);
  // Live, or refused for good (halted, cancelled, superseded, rolled back by a person).
  if (same.some((r) => isLive(r) || refusesTarget(r, s.rollouts))) return undefined;
  const from = fromOf(pool, input);
  const previous = same.at(-1);
  // Ids carry 8 hex digits of the digest: two digests sharing them get `-r<n>` as a repair does.
  const taken = s.rollouts.filter((r) => r.id === id || r.id.startsWith(`${id}-r`)).length;
  return {
    id: taken === 0 ? id : `${id}-r${String(taken)}`,
    pool: `${s.policy.name}/${t.tag}`,
    target: { version: t.tag, digest: t.digest },
    state: s.policy.requireApproval === true ? 'AwaitingApproval' : 'Active',
    createdAt: s.now,
    machines: {},
    ...(from !== undefined && { from }),
    ...(previous !== undefined && { repairOf: previous.id }),
    images: { policy: s.policy.name, repository: s.policy.repository, units: {} },
  };
}

/** See the module comment. `input` is `planningInput` of the same units and decisions. */
export function rolloutChanges(s: PolicyState, input: PlanningInput): RolloutChanges {
  const create = [...input.targets.keys()].flatMap((pool) => toCreate(s, pool, input) ?? []);
  const live = s.rollouts.filter(isLive);
  const supersede = create.flatMap((n) =>
    live
      .filter((r) => r.pool === n.pool)
      .map((r) => ({
        rollout: r.id,
        reason: `superseded by ${n.id} (${n.target.version}@${n.target.digest.slice(0, 19)})`,
      })),
  );
  const gone = new Set(supersede.map((x) => x.rollout));
  const missing = live.flatMap((r) => {
    const tag = r.target.version;
    if (gone.has(r.id) || r.rollbackOf !== undefined || r.state !== 'Active') return [];
    if (s.scan === undefined || s.scan.tags.has(tag)) return [];
    const reason = `${ErrorCode.ImageMissing}: ${s.policy.repository}:${tag} is no longer in the registry — push it again, or cancel the rollout`;
    return [{ rollout: r.id, reason }];
  });
  return { create, supersede, missing };
}
