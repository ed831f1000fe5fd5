// SPDX-License-Identifier: Apache-2.0
/**
 * Which rollouts a discovery pass starts (docs/adr/0005 §4). A pool's candidate release is either
 * the next step on the path to the newest eligible release of its channel (core's `selectLatest`:
 * official, in the channel, signed when required, reachable through `upgrade-from` ranges from
 * the oldest release the pool's machines run — a multi-hop path is walked as one rollout per
 * step; the rules live in `eligibility.ts`, shared with Cluster API updates), or — with
 * `promoteFrom` — the target of the newest rollout the other pool completed
 * (dev → staging → prod). A candidate younger than the pool's `minReleaseAgeMs`
 * (counted from when this operator first saw it) waits.
 *
 * A rollout is created once per (pool, release digest) — never again after it completed, halted
 * or was cancelled, so a halted rollout stays halted until a person acts; a rolled-back release
 * is blocked for the pool and offered again, as a new rollout, once a person unblocks it — only when some
 * machine of the pool is seen running another release and would move to it (a machine whose
 * release is not known yet does not count, nor one ahead of it), and only when the pool has no
 * rollout running. A release blocked for the pool (`ReleaseBlock`: by a person, or because a
 * rollout to it halted) is never offered: paths go around it.
 * Pools that require approval get their rollout in `AwaitingApproval`.
 */
import type { Release } from '../../core/releases/release.ts';
import type { Selection } from '../../core/releases/select.ts';
import type { TagVersion } from '../../core/releases/tag.ts';
import { passedOver } from '../../core/rollout/skip.ts';
import { isEnded } from '../../core/rollout/vocabulary.ts';
import type { Machine, Pool, Rollout } from '../../core/rollout/types.ts';
import type { ReleaseBlock } from '../ports/store.ts';
import { blockedFor, oldestRunning, selection } from './eligibility.ts';

export { blockedFor } from './eligibility.ts';

export interface DiscoveryInput {
  readonly pools: readonly Pool[];
  readonly releases: readonly Release[];
  readonly rollouts: readonly Rollout[];
  readonly machines: readonly Machine[];
  readonly now: number;
  /** When this operator first saw each release digest (epoch ms); for `minReleaseAgeMs`. */
  readonly firstSeen?: ReadonlyMap<string, number>;
  readonly requireSignature?: boolean;
  /** The cluster's Kubernetes version (`v1.31.2`); absent: release ranges are not checked. */
  readonly kubernetes?: string;
  /** Blocked releases (the store's); none when absent. */
  readonly blocks?: readonly ReleaseBlock[];
}

/** What a pool would move to: a release, and the versions of the whole path when it is a step on one. */
export interface Candidate {
  readonly version: string;
  readonly digest: string;
  readonly path?: readonly string[];
}

export const rolloutId = (pool: string, r: Candidate): string =>
  `${pool}-${r.version}-${r.digest.slice(r.digest.indexOf(':') + 1, r.digest.indexOf(':') + 9)}`;

function newRollout(pool: Pool, target: Candidate, i: DiscoveryInput): Rollout {
  const from = previousRelease(pool.name, i.machines, target.digest, i.releases);
  const now = i.now;
  return {
    id: rolloutId(pool.name, target),
    pool: pool.name,
    target: { version: target.version, digest: target.digest },
    state: pool.requireApproval === true ? 'AwaitingApproval' : 'Active',
    createdAt: now,
    ...(pool.phased !== undefined && { phased: pool.phased }),
    ...(from !== undefined && { from }),
    ...(target.path !== undefined && { path: target.path }),
    machines: {},
  };
}

/** The newest rollout `from` completed, as the target a promoted pool follows. */
export function promoted(from: string, rollouts: readonly Rollout[]): Candidate | undefined {
  const done = rollouts.filter((r) => r.pool === from && r.state === 'Completed');
  return done.sort((a, b) => b.createdAt - a.createdAt)[0]?.target;
}

/**
 * The version a pool's path starts from: the oldest release its machines run (pinned machines
 * aside: rollouts skip them), read from the release list by digest, else from the version the
 * agent reported. Undefined when none is known: every release is then reachable.
 */
export function poolCurrent(
  pool: string,
  machines: readonly Machine[],
  releases: readonly Release[],
): TagVersion | undefined {
  const members = machines.filter((m) => m.pool === pool && m.pin === undefined);
  return oldestRunning(members, releases);
}

/** A channel pool's selection among the releases not blocked for it, from its oldest release. */
export function channelSelection(
  pool: Pool & { readonly channel: string },
  i: DiscoveryInput,
): { readonly current: string | undefined; readonly selection: Selection } {
  const current = poolCurrent(pool.name, i.machines, i.releases)?.tag;
  const rules = { pool, current, kubernetes: i.kubernetes, requireSignature: i.requireSignature };
  return { current, selection: selection(i.releases, { ...rules, blocks: i.blocks }) };
}

/** One rollout per step: the next step first; the pass after it completes takes the next one. */
export function nextStep(selection: Selection & { found: true }): Candidate {
  const [step] = selection.path;
  if (step === undefined || selection.path.length === 1) return selection.release;
  return { version: step.version, digest: step.digest, path: selection.path.map((r) => r.version) };
}

function candidate(pool: Pool, i: DiscoveryInput): Candidate | undefined {
  if (pool.promoteFrom !== undefined) {
    const c = promoted(pool.promoteFrom, i.rollouts);
    return c === undefined || blockedFor(pool.name, i.blocks).has(c.digest) ? undefined : c;
  }
  if (pool.channel === undefined) return undefined;
  const { selection } = channelSelection({ ...pool, channel: pool.channel }, i);
  return selection.found ? nextStep(selection) : undefined;
}

function oldEnough(pool: Pool, c: Candidate, i: DiscoveryInput): boolean {
  const minAge = pool.minReleaseAgeMs ?? 0;
  if (minAge <= 0) return true;
  const seen = i.firstSeen?.get(c.digest) ?? i.now;
  return i.now - seen >= minAge;
}

/** Still under way: not halted (waiting for a person) and not over. */
const running = (r: Rollout): boolean => r.state !== 'Halted' && !isEnded(r.state);

/**
 * The machines a rollout of `pool` to `c` would start: not on it, not pinned elsewhere, not
 * ahead, and not held when the pool finishes without held machines (`onHold: skip`).
 */
function wouldMove(members: readonly Machine[], pool: Pool, c: Candidate, now: number): Machine[] {
  const probe: Rollout = {
    ...{ id: '', pool: pool.name, target: { version: c.version, digest: c.digest } },
    ...{ state: 'Active', createdAt: 0, machines: {} },
  };
  const rule = { onHold: pool.onHold, now };
  return members.filter((m) => m.digest !== c.digest && passedOver(m, probe, rule) === undefined);
}

/** A later rollout of `pool` to `c`: the `n`th (`-r<n>`), so every rollout keeps its own id. */
const again = (pool: Pool, c: Candidate, i: DiscoveryInput, n: number): Rollout => ({
  ...newRollout(pool, c, i),
  id: `${rolloutId(pool.name, c)}-r${String(n)}`,
});

/**
 * What the pool's last rollout to `c` lets discovery start now. Completed: a rollout repairing
 * drift when machines of the pool run something else again (a manual rollback, a
 * re-image, a newly registered machine), under the pool's policies. Rolled back: `c` is offered
 * only once a person lifted the block the rollback set (`c` is the candidate, so it was), as a
 * new rollout. Halted, cancelled or superseded: nothing — a person acts on those.
 */
function after(
  pool: Pool,
  c: Candidate,
  i: DiscoveryInput,
  same: readonly Rollout[],
): Rollout | undefined {
  const last = same.at(-1);
  if (last?.state === 'RolledBack') return again(pool, c, i, same.length);
  if (last?.state !== 'Completed') return undefined;
  // A rollback just made, its original not ended yet: the next pass ends and blocks it.
  if (i.rollouts.some((r) => r.rollbackOf === last.id)) return undefined;
  const members = i.machines.filter((m) => m.pool === pool.name && m.digest !== undefined);
  if (wouldMove(members, pool, c, i.now).length === 0) return undefined;
  return { ...again(pool, c, i, same.length), repairOf: last.id };
}

/** The rollouts to create now: to a new release, or repairing drift from a completed one. */
export function rolloutsToCreate(i: DiscoveryInput): Rollout[] {
  const created: Rollout[] = [];
  for (const pool of i.pools) {
    const c = candidate(pool, i);
    if (c === undefined || !oldEnough(pool, c, i)) continue;
    // Only machines whose release is known count: one not seen yet (its agent did not answer)
    // is not "on another release", or a pool already on `c` would get a rollout to it.
    const members = i.machines.filter((m) => m.pool === pool.name && m.digest !== undefined);
    if (wouldMove(members, pool, c, i.now).length === 0) continue;
    const ofPool = i.rollouts.filter((r) => r.pool === pool.name);
    if (ofPool.some(running)) continue;
    const same = ofPool.filter((r) => r.target.digest === c.digest);
    const next = same.length === 0 ? newRollout(pool, c, i) : after(pool, c, i, same);
    if (next !== undefined) created.push(next);
  }
  return created;
}

/** A halted rollout a new rollout of its pool replaces: it ends `Superseded`, with the reason. */
export interface Superseded {
  readonly rollout: string;
  readonly reason: string;
}

/**
 * The halted rollouts that `created` supersede: a newer release's rollout for the same pool ends
 * the older halted one, so it no longer shows as waiting.
 */
export function supersededBy(
  created: readonly Rollout[],
  rollouts: readonly Rollout[],
): Superseded[] {
  return created.flatMap((c) =>
    rollouts
      .filter((r) => r.pool === c.pool && r.state === 'Halted' && r.id !== c.id)
      .map((r) => ({
        rollout: r.id,
        reason: `superseded by ${c.id} (${c.target.version})`,
      })),
  );
}

/** When a release should be considered soaked, for a wait message; undefined if it already is. */
export function soakedAt(
  pool: Pool,
  digest: string,
  i: Pick<DiscoveryInput, 'firstSeen' | 'now'>,
): number | undefined {
  const minAge = pool.minReleaseAgeMs ?? 0;
  const seen = i.firstSeen?.get(digest) ?? i.now;
  return seen + minAge > i.now ? seen + minAge : undefined;
}

/**
 * The release most machines of the pool run, other than `target`: a new rollout's `from`. Its
 * version is the release's (by digest), else what the agent reported, else the digest itself.
 */
export function previousRelease(
  pool: string,
  machines: readonly Machine[],
  target: string,
  releases: readonly Release[] = [],
): { version: string; digest: string } | undefined {
  const counts = new Map<string, { version: string; digest: string; n: number }>();
  for (const m of machines) {
    if (m.pool !== pool || m.digest === undefined || m.digest === target) continue;
    const version = releases.find((r) => r.digest === m.digest)?.version ?? m.version ?? m.digest;
    const c = counts.get(m.digest) ?? { version, digest: m.digest, n: 0 };
    c.n++;
    counts.set(m.digest, c);
  }
  const best = [...counts.values()].sort(
    (a, b) => b.n - a.n || a.digest.localeCompare(b.digest),
  )[0];
  return best === undefined ? undefined : { version: best.version, digest: best.digest };
}
