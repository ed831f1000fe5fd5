// SPDX-License-Identifier: Apache-2.0
/**
 * Everything plan() precomputes in one pass over the snapshot, so each candidate is judged in
 * O(policies) with Map lookups: machines by id and pool, the unavailable set and its count per
 * scope (in flight + soaking + down, across ALL rollouts), the control-plane state per cluster,
 * and the resolved policies per pool. Admitting a machine updates these tallies in place.
 */
import {
  FLEET_SCOPE,
  ofKind,
  poolRules,
  poolScope,
  policiesOf,
  scopeRules,
  type PoolRules,
  type ScopeRules,
} from './rules.ts';
import type { FleetSnapshot, Machine, Pool, Refusal, Rollout, StartRecord } from './types.ts';
import { passedOver } from './skip.ts';
import { WindowMemo } from './window-memo.ts';

/** Per cluster: control-plane machines upgrading (in flight or soaking) and down otherwise. */
export interface ClusterState {
  upgrading: number;
  down: number;
  /** The first upgrading machine, for messages. */
  upgradingId: string | undefined;
  /** Control-plane machines Pending or InFlight in an Active or Paused rollout. */
  readonly unfinished: Set<string>;
}

export interface PlanContext {
  readonly now: number;
  readonly snapshot: FleetSnapshot;
  readonly byPool: ReadonlyMap<string, readonly Machine[]>;
  /**
   * Machine → why it is unavailable (`upgrading in rollout r1`, `down`, `soaking until …`). Keyed
   * by the snapshot's machine objects (ids are unique in a snapshot), not by id: every candidate
   * is looked up, and a miss on a string key compares id strings scattered over the heap — on
   * 100 000 machines that cost more than every check together.
   */
  readonly unavailable: Map<Machine, string>;
  /** Unavailable machines per scope key (`fleet`, `pool:<name>`). */
  readonly scopeCount: Map<string, number>;
  readonly clusters: Map<string, ClusterState>;
  readonly windows: WindowMemo;
  /** Bumped by every admission: refusals built from the tallies are reused until it changes. */
  admissions: number;
  readonly refusals: Map<
    object,
    { readonly version: number; readonly refusal: Refusal | undefined }
  >;
  rulesFor(pool: string): PoolRules;
}

export const clusterOf = (m: Pick<Machine, 'cluster'>): string => m.cluster ?? 'default';

/** Rollouts oldest first (ties by id, so nothing depends on the input order). */
export function oldestFirst(rollouts: readonly Rollout[]): Rollout[] {
  return [...rollouts].sort(
    (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** What the context's one pass over every machine gathers. */
interface Gathered {
  readonly byPool: Map<string, Machine[]>;
  /** The machines {@link markRollout} may mark, by id. */
  readonly byId: Map<string, Machine>;
  readonly down: readonly Machine[];
}

/**
 * One pass over every machine: by pool, the markable ones by id, and those that are down. One pass,
 * as each costs milliseconds on 100 000 machines; with forEach, not for…of: a plan runs it once,
 * often before it is optimised, and the iterator's result objects were megabytes of garbage.
 */
function gather(machines: readonly Machine[], markable: ReadonlySet<string>): Gathered {
  const byPool = new Map<string, Machine[]>();
  const byId = new Map<string, Machine>();
  const down: Machine[] = [];
  let pool: string | undefined;
  let list: Machine[] = [];
  machines.forEach((m) => {
    // A pool's machines usually come together: its list is looked up when the pool changes.
    if (m.pool !== pool) {
      pool = m.pool;
      list = byPool.get(pool) ?? [];
      byPool.set(pool, list);
    }
    list.push(m);
    if (markable.size > 0 && markable.has(m.id)) byId.set(m.id, m);
    if (!m.available) down.push(m);
  });
  return { byPool, byId, down };
}

function startsByPool(starts: readonly StartRecord[]): Map<string, StartRecord[]> {
  const out = new Map<string, StartRecord[]>();
  for (const s of starts) {
    let list = out.get(s.pool);
    if (list === undefined) out.set(s.pool, (list = []));
    list.push(s);
  }
  return out;
}

function rulesResolver(
  snapshot: FleetSnapshot,
  byPool: ReadonlyMap<string, readonly Machine[]>,
  now: number,
): (pool: string) => PoolRules {
  const pools = new Map<string, Pool>(snapshot.pools.map((p) => [p.name, p]));
  const starts = startsByPool(snapshot.starts);
  const fleet: ScopeRules = scopeRules(
    {
      scope: FLEET_SCOPE,
      policies: snapshot.fleetPolicies,
      size: snapshot.machines.length,
      starts: snapshot.starts,
    },
    now,
  );
  const cache = new Map<string, PoolRules>();
  return (name) => {
    let rules = cache.get(name);
    if (rules === undefined) {
      const own = scopeRules(
        {
          scope: poolScope(name),
          policies: policiesOf(pools, name),
          size: byPool.get(name)?.length ?? 0,
          starts: starts.get(name) ?? [],
        },
        now,
      );
      rules = poolRules(own, fleet, pools.get(name)?.onHold);
      cache.set(name, rules);
    }
    return rules;
  };
}

function clusterState(clusters: Map<string, ClusterState>, name: string): ClusterState {
  let c = clusters.get(name);
  if (c === undefined) {
    c = { upgrading: 0, down: 0, upgradingId: undefined, unfinished: new Set() };
    clusters.set(name, c);
  }
  return c;
}

/** Marks `m` unavailable once, counting it in its pool, the fleet and (control plane) its cluster. */
export function markUnavailable(
  ctx: PlanContext,
  m: Machine,
  why: string,
  upgrading: boolean,
): void {
  if (ctx.unavailable.has(m)) return;
  ctx.unavailable.set(m, why);
  const pool = poolScope(m.pool);
  ctx.scopeCount.set(FLEET_SCOPE, (ctx.scopeCount.get(FLEET_SCOPE) ?? 0) + 1);
  ctx.scopeCount.set(pool, (ctx.scopeCount.get(pool) ?? 0) + 1);
  if (m.role !== 'control-plane') return;
  const c = clusterState(ctx.clusters, clusterOf(m));
  if (!upgrading) {
    c.down++;
    return;
  }
  c.upgrading++;
  // The smallest id names the busy machine, so the message does not depend on input order.
  if (c.upgradingId === undefined || m.id < c.upgradingId) c.upgradingId = m.id;
}

/**
 * In flight and soaking machines of one rollout (any state: a paused upgrade still runs), among
 * `ids`, its {@link markableIds}.
 */
function markRollout(
  ctx: PlanContext,
  r: Rollout,
  ids: readonly string[],
  machines: ReadonlyMap<string, Machine>,
): void {
  for (const id of ids) {
    const m = machines.get(id);
    const p = r.machines[id];
    if (m === undefined || p === undefined) continue;
    if (p.phase === 'InFlight') {
      markUnavailable(ctx, m, `upgrading in rollout ${r.id}`, true);
    } else if (p.phase === 'Succeeded' && p.finishedAt !== undefined) {
      const end = p.finishedAt + ctx.rulesFor(m.pool).machineSoakMs;
      if (end > ctx.now) {
        markUnavailable(ctx, m, `soaking after rollout ${r.id}`, true);
      }
    }
  }
}

/** Control-plane machines not finished in Active/Paused rollouts, per cluster (control-plane-first). */
function markUnfinishedControlPlane(ctx: PlanContext, r: Rollout): void {
  if (r.state !== 'Active' && r.state !== 'Paused') return;
  ctx.byPool.get(r.pool)?.forEach((m) => {
    if (m.role !== 'control-plane') return;
    const phase = r.machines[m.id]?.phase ?? 'Pending';
    const rule = { onHold: ctx.rulesFor(r.pool).onHold, now: ctx.now };
    const open =
      phase === 'InFlight' || (phase === 'Pending' && passedOver(m, r, rule) === undefined);
    if (open) clusterState(ctx.clusters, clusterOf(m)).unfinished.add(m.id);
  });
}

/** The longest machine soak any policy asks for: no machine soaks longer, whatever its pool. */
function longestSoak(snapshot: FleetSnapshot): number {
  let longest = 0;
  for (const policies of [snapshot.fleetPolicies, ...snapshot.pools.map((p) => p.policies)]) {
    for (const p of ofKind(policies, 'machine-soak')) longest = Math.max(longest, p.soakMs);
  }
  return longest;
}

/**
 * The ids of the machines {@link markRollout} may mark in `r`: InFlight, or Succeeded recently
 * enough to be soaking still (`soak` is the longest machine soak). Only those are mapped by id: a
 * map of every machine cost more than the rest of the context on 100 000 machines, and a completed
 * rollout names every machine of its pool. The record is walked once: for…in over a record of
 * 100 000 ids costs milliseconds (not Object.entries: no array per machine).
 */
function markableIds(r: Rollout, soak: number, now: number): string[] {
  const ids: string[] = [];
  for (const id in r.machines) {
    const p = r.machines[id];
    const end = p?.phase === 'Succeeded' ? (p.finishedAt ?? -Infinity) + soak : -Infinity;
    if (p?.phase === 'InFlight' || end > now) ids.push(id);
  }
  return ids;
}

export function buildContext(snapshot: FleetSnapshot, now: number): PlanContext {
  // Oldest first: a machine busy in two rollouts is reported under the older one.
  const rollouts = oldestFirst(snapshot.rollouts);
  const soak = longestSoak(snapshot);
  const markable = rollouts.map((r) => markableIds(r, soak, now));
  const { byPool, byId, down } = gather(snapshot.machines, new Set(markable.flat()));
  const ctx: PlanContext = {
    now,
    snapshot,
    byPool,
    unavailable: new Map(),
    scopeCount: new Map(),
    clusters: new Map(),
    windows: new WindowMemo(now),
    admissions: 0,
    refusals: new Map(),
    rulesFor: rulesResolver(snapshot, byPool, now),
  };
  rollouts.forEach((r, n) => {
    markRollout(ctx, r, markable[n] ?? [], byId);
  });
  for (const m of down) markUnavailable(ctx, m, 'down', false);
  for (const r of rollouts) markUnfinishedControlPlane(ctx, r);
  return ctx;
}
