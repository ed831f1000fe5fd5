// SPDX-License-Identifier: Apache-2.0
/**
 * The image planner's `FleetSnapshot` (docs/adr/0013 decisions 2, 9): the live image rollouts,
 * their units as machines and their pools, so the one planner decides canary, rate, windows,
 * soak, failure budget and approval for workloads as it does for machines.
 *
 * Each unit is a machine of at most one pool. A unit belongs to the live forward rollout whose
 * target it moves to; otherwise to the newest live rollout that changed it (recorded in
 * `images.units`): a unit already moved stays a member of its rollout, on the digest it runs, so
 * the rollout completes, and a rollback's members are exactly the units it puts back. A GM-pinned
 * unit that would move to a live rollout's target is a member with its pin: `Pinned`, never moved.
 * A unit is `available` as its workload reports, except in a rollback (putting back an unavailable
 * workload is its point); an unavailable canary holds the rest of its rollout (`Held`).
 */
import { parseImageReference } from '../slots/reference.ts';
import type { FleetSnapshot, Machine, Policy, Rollout, StartRecord } from '../rollout/types.ts';
import { CANARY_LABEL, machineOf, poolPolicies } from './plan-input.ts';
import { isLive, type PolicyState } from './rollouts.ts';
import type { TargetDecision } from './target.ts';
import type { ImageUnit } from './units.ts';

/** The digest the unit's first followed container runs, when known. */
function runningDigest(unit: ImageUnit, d: TargetDecision | undefined): string | undefined {
  if (d?.kind === 'current') return d.digest;
  if (d?.kind === 'move' && d.from !== undefined) return d.from;
  const image = unit.workload.containers.find((c) => c.name === unit.containers[0])?.image;
  try {
    return image === undefined ? undefined : parseImageReference(image).digest;
  } catch {
    return undefined;
  }
}

const movesTo = (d: TargetDecision | undefined, r: Rollout): boolean =>
  r.rollbackOf === undefined &&
  d?.kind === 'move' &&
  d.tag === r.target.version &&
  d.digest === r.target.digest;

const pinnedFor = (d: TargetDecision | undefined, r: Rollout): boolean =>
  r.rollbackOf === undefined &&
  d?.kind === 'skip' &&
  d.pin !== undefined &&
  d.wouldMoveTo?.tag === r.target.version &&
  d.wouldMoveTo.digest === r.target.digest;

/** A unit a rollout changed that the cluster no longer shows (deleted): a member, unavailable. */
const goneUnit = (id: string, pool: string): Machine => ({
  id,
  role: 'worker',
  pool,
  labels: {},
  digest: undefined,
  version: undefined,
  available: false,
});

/** Unit id → the live rollout it belongs to (see the module comment). */
function claims(s: PolicyState, live: readonly Rollout[]): Map<string, Rollout> {
  const out = new Map<string, Rollout>();
  for (const unit of s.units) {
    const d = s.decisions.get(unit.id);
    const r = live.find((x) => movesTo(d, x) || pinnedFor(d, x));
    if (r !== undefined) out.set(unit.id, r);
  }
  for (const r of live)
    for (const id of Object.keys(r.images?.units ?? {})) if (!out.has(id)) out.set(id, r);
  return out;
}

/** A hold for an unavailable canary is made again each pass; it names this horizon. */
const CANARY_RECHECK_MS = 60_000;

/**
 * A canary unit that is unavailable before it started holds the others of its rollout: the
 * planner would otherwise take an available production workload as the canary in its place.
 */
function holdForCanaries(machines: Machine[], live: readonly Rollout[], now: number): void {
  for (const r of live) {
    if (r.rollbackOf !== undefined) continue;
    const waiting = machines.find(
      (m) =>
        m.pool === r.pool &&
        m.labels[CANARY_LABEL] === 'yes' &&
        m.pin === undefined &&
        !m.available &&
        r.machines[m.id] === undefined,
    );
    if (waiting === undefined) continue;
    const hold = {
      reason: `the canary ${waiting.id} is not available`,
      until: now + CANARY_RECHECK_MS,
    };
    machines.forEach((m, i) => {
      if (m.pool === r.pool && m.labels[CANARY_LABEL] !== 'yes') machines[i] = { ...m, hold };
    });
  }
}

function policyPart(s: PolicyState): { machines: Machine[]; pools: FleetSnapshot['pools'] } {
  // Newest first: a unit two rollouts changed belongs to the later one.
  const live = s.rollouts.filter(isLive).sort((a, b) => b.createdAt - a.createdAt);
  const units = new Map(s.units.map((u) => [u.id, u]));
  const machines: Machine[] = [];
  for (const [id, r] of claims(s, live)) {
    const unit = units.get(id);
    if (unit === undefined) {
      machines.push(goneUnit(id, r.pool));
      continue;
    }
    const d = s.decisions.get(id);
    const m = machineOf(s.policy, unit, r.pool, runningDigest(unit, d));
    const pin = d?.kind === 'skip' ? d.pin : undefined;
    // A rollback puts back a workload that is not available: that is what it is for.
    const n = r.rollbackOf === undefined ? m : { ...m, available: true };
    machines.push(
      pin === undefined || !pinnedFor(d, r)
        ? n
        : {
            ...n,
            digest: pin.digest,
            pin: { version: pin.digest, reason: `GM image: ${pin.reason}` },
          },
    );
  }
  holdForCanaries(machines, live, s.now);
  const pools = [...new Set(live.map((r) => r.pool))].map((name) => ({
    name,
    policies: poolPolicies(
      s.policy,
      machines.filter((m) => m.pool === name),
    ),
    ...(s.policy.requireApproval === true && { requireApproval: true }),
  }));
  return { machines, pools };
}

/** Limits counted over every unit of the policy, whatever tag it moves to (its pools are per tag). */
const policyWide: ReadonlySet<Policy['kind']> = new Set(['concurrency', 'rate', 'window']);

/**
 * The snapshot of one policy: its live rollouts, their units as machines, one pool per rollout
 * carrying the shaping policies (canary, batches, soak, failure budget), and the policy's limits
 * (concurrency, rate, windows) as the snapshot's fleet policies — so they count every unit of the
 * policy, not each tag's pool apart. `starts` are the policy's rollouts' (rate limits count them).
 */
export function imageSnapshot(s: PolicyState, starts: readonly StartRecord[]): FleetSnapshot {
  const shaping = {
    ...s.policy,
    policies: s.policy.policies.filter((p) => !policyWide.has(p.kind)),
  };
  const { machines, pools } = policyPart({ ...s, policy: shaping });
  return {
    machines,
    pools,
    fleetPolicies: s.policy.policies.filter((p) => policyWide.has(p.kind)),
    rollouts: s.rollouts.filter(isLive),
    starts,
  };
}
