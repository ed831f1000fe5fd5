// SPDX-License-Identifier: Apache-2.0
/**
 * The structure of one rollout (ADR 0005 §1–2): its machines in order — control plane first, then
 * by zone (with one-zone-at-a-time), then by the stable hash of (rollout, machine) — with the
 * canary set (the machines that started as canaries, then the first that can start), the waves (batches of the tightest
 * concurrency limit, with a batch soak) and the current zone per role. A later group waits until
 * every machine of the earlier ones is finished — except, for waves and zones, machines that cannot
 * start on their own account (see {@link Blocked}): one machine that is down must not stall a fleet.
 */
import type { PoolRules } from './rules.ts';
import type { Machine, MachinePhase, MachineProgress, Role, Rollout } from './types.ts';
import { orderHash } from './wariness.ts';
import { skipOf, type Reason } from './skip.ts';

export interface Entry {
  readonly machine: Machine;
  readonly progress: MachineProgress | undefined;
  readonly phase: MachinePhase;
  /** Why a Pending machine is not part of the rollout (pinned elsewhere, already on target). */
  readonly skip: Reason | undefined;
  readonly canary: boolean;
  /** 0 = canary; 1.. = wave. */
  readonly batch: number;
  readonly zoneRank: number;
}

export interface RolloutShape {
  readonly rollout: Rollout;
  readonly rules: PoolRules;
  readonly entries: readonly Entry[];
  readonly zoneNames: readonly string[];
  /** Canaries Pending or InFlight; the latest canary finish. */
  readonly canaryOpen: number;
  readonly canaryLastFinish: number | undefined;
  /** Per wave: machines InFlight or Pending and not blocked, and the latest finish. Index 0 unused. */
  readonly batchOpen: readonly number[];
  readonly batchLastFinish: readonly number[];
  /** The lowest wave with unfinished machines (Infinity: none). */
  readonly firstOpenBatch: number;
  /** Per wave b: the latest finish of waves 1..b−1 (−Infinity: none). */
  readonly finishBefore: readonly number[];
  /** Per role: the lowest zone rank that still has unfinished non-canary machines (not blocked). */
  readonly zoneMin: ReadonlyMap<Role, number>;
  readonly failed: number;
  /** Machines set aside (`Skipped`: quarantined by their drain); not failures. */
  readonly skipped: number;
  /** Machines Pending (not skipped) or InFlight. */
  readonly open: number;
}

const NO_ZONE = '(no zone)';

function zoneTable(machines: readonly Machine[], rules: PoolRules): string[] {
  const zones = rules.zones;
  if (zones === undefined) return [];
  const order = zones.order ?? [];
  const seen = new Set<string>();
  for (const m of machines) {
    const z = m.labels[zones.label];
    if (z !== undefined && !order.includes(z)) seen.add(z);
  }
  return [...order, ...[...seen].sort(), NO_ZONE];
}

interface Ordered {
  readonly machines: readonly Machine[];
  /** Zone rank of each machine, aligned with `machines`. */
  readonly ranks: Int32Array;
  readonly zoneNames: readonly string[];
  readonly zones: PoolRules['zones'];
}

/** Orders are cached per machines array, so simulate (same machines, many plans) sorts once. */
const orderCache = new WeakMap<readonly Machine[], Map<string, Ordered>>();
const TWO_POW_32 = 4_294_967_296;
const MAX_ZONE_RANK = 4_095;

function zoneRanks(
  pool: readonly Machine[],
  rules: PoolRules,
  names: readonly string[],
): Int32Array {
  const ranks = new Int32Array(pool.length);
  const label = rules.zones?.label;
  if (label === undefined) return ranks;
  const index = new Map(names.map((z, i) => [z, Math.min(i, MAX_ZONE_RANK)]));
  const none = index.get(NO_ZONE) ?? MAX_ZONE_RANK;
  for (let i = 0; i < pool.length; i++) {
    const z = pool[i]?.labels[label];
    ranks[i] = z === undefined ? none : (index.get(z) ?? none);
  }
  return ranks;
}

/**
 * Sorts by one packed number per machine — role, zone rank, then the 32-bit hash — over an index
 * array: 100 000 machines sort in milliseconds, where comparing objects took hundreds.
 */
function sortOrder(pool: readonly Machine[], ranks: Int32Array, rolloutId: string): Uint32Array {
  const keys = new Float64Array(pool.length);
  const idx = new Uint32Array(pool.length);
  for (let i = 0; i < pool.length; i++) {
    const m = pool[i] as Machine;
    const group = (m.role === 'control-plane' ? 0 : MAX_ZONE_RANK + 1) + (ranks[i] ?? 0);
    keys[i] = group * TWO_POW_32 + orderHash(rolloutId, m.id);
    idx[i] = i;
  }
  const id = (i: number): string => (pool[i] as Machine).id;
  return idx.sort((a, b) => (keys[a] ?? 0) - (keys[b] ?? 0) || (id(a) < id(b) ? -1 : 1));
}

function ordered(
  all: readonly Machine[],
  pool: readonly Machine[],
  r: Rollout,
  rules: PoolRules,
): Ordered {
  let perRollout = orderCache.get(all);
  if (perRollout === undefined) {
    perRollout = new Map<string, Ordered>();
    orderCache.set(all, perRollout);
  }
  const key = `${r.id}\u0000${r.pool}`;
  const hit = perRollout.get(key);
  if (hit !== undefined && hit.zones === rules.zones && hit.machines.length === pool.length) {
    return hit;
  }
  const zoneNames = zoneTable(pool, rules);
  const poolRanks = zoneRanks(pool, rules, zoneNames);
  const order = sortOrder(pool, poolRanks, r.id);
  const machines = Array.from(order, (i) => pool[i] as Machine);
  const ranks = order.map((i) => poolRanks[i] ?? 0);
  const result: Ordered = { machines, ranks: new Int32Array(ranks), zoneNames, zones: rules.zones };
  perRollout.set(key, result);
  return result;
}

/**
 * The canaries: machines that already started take the slots first (a canary stays one once it
 * ran), then, in order, Pending machines that can start now — a held, down or busy machine is
 * never picked, so the canary phase does not wait on it while free machines idle (issue 16). It
 * joins a wave when it can.
 */
function canariesOf(
  o: Ordered,
  r: Rollout,
  skips: readonly (Reason | undefined)[],
  c: { readonly slots: number; readonly blocked: Blocked },
): Set<Machine> {
  const { slots, blocked } = c;
  const chosen = new Set<Machine>();
  if (slots <= 0) return chosen;
  const phaseOf = (m: Machine): MachinePhase => r.machines[m.id]?.phase ?? 'Pending';
  o.machines.forEach((m, k) => {
    if (chosen.size < slots && skips[k] === undefined && phaseOf(m) !== 'Pending') chosen.add(m);
  });
  o.machines.forEach((m, k) => {
    if (chosen.size >= slots || skips[k] !== undefined || phaseOf(m) !== 'Pending') return;
    if (!blocked(m)) chosen.add(m);
  });
  return chosen;
}

function entriesOf(o: Ordered, r: Rollout, rules: PoolRules, blocked: Blocked): Entry[] {
  const size = rules.batches === undefined ? Infinity : rules.batchSize;
  const skips = o.machines.map((m) =>
    (r.machines[m.id]?.phase ?? 'Pending') === 'Pending' ? skipOf(m, r) : undefined,
  );
  const canaries = canariesOf(o, r, skips, { slots: rules.canary?.count ?? 0, blocked });
  let taken = 0;
  return o.machines.map((machine, k) => {
    const progress = r.machines[machine.id];
    const phase = progress?.phase ?? 'Pending';
    const skip = skips[k];
    const zoneRank = o.ranks[k] ?? 0;
    if (skip !== undefined) {
      return { machine, progress, phase, skip, canary: false, batch: 1, zoneRank };
    }
    if (canaries.has(machine))
      return { machine, progress, phase, skip, canary: true, batch: 0, zoneRank };
    const batch = 1 + Math.floor(taken++ / size);
    return { machine, progress, phase, skip, canary: false, batch, zoneRank };
  });
}

const isOpen = (e: Entry): boolean =>
  e.skip === undefined && (e.phase === 'Pending' || e.phase === 'InFlight');

const maxOf = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

/** The running totals of one pass over a rollout's entries. */
interface Tally {
  canaryOpen: number;
  canaryLastFinish: number | undefined;
  failed: number;
  skipped: number;
  open: number;
  readonly batchOpen: number[];
  readonly batchLastFinish: number[];
  readonly zoneMin: Map<Role, number>;
}

/**
 * Whether a Pending machine cannot start for reasons of its own (down, held, busy in another
 * rollout, not yet phased in). Such a machine does not hold later waves and zones back — it joins
 * when it can — and, while Pending, is not picked as a canary.
 */
export type Blocked = (m: Machine) => boolean;

function count(t: Tally, e: Entry, blocked: Blocked): void {
  const unfinished = isOpen(e);
  if (unfinished) t.open++;
  if (e.phase === 'Failed' || e.phase === 'RolledBack') t.failed++;
  if (e.phase === 'Skipped') t.skipped++;
  if (e.skip !== undefined) return;
  if (e.canary) {
    t.canaryOpen += unfinished ? 1 : 0;
    t.canaryLastFinish = maxOf(t.canaryLastFinish, e.progress?.finishedAt);
    return;
  }
  countWave(t, e, unfinished && !(e.phase === 'Pending' && blocked(e.machine)));
}

function countWave(t: Tally, e: Entry, unfinished: boolean): void {
  t.batchOpen[e.batch] = (t.batchOpen[e.batch] ?? 0) + (unfinished ? 1 : 0);
  const finish = e.progress?.finishedAt ?? -Infinity;
  t.batchLastFinish[e.batch] = Math.max(t.batchLastFinish[e.batch] ?? -Infinity, finish);
  if (unfinished && e.zoneRank < (t.zoneMin.get(e.machine.role) ?? Infinity)) {
    t.zoneMin.set(e.machine.role, e.zoneRank);
  }
}

/** What {@link shapeRollout} needs: the rollout, its pool's machines and rules. */
export interface ShapeInput {
  /** The snapshot's machines array (the key of the order cache). */
  readonly all: readonly Machine[];
  readonly pool: readonly Machine[];
  readonly rollout: Rollout;
  readonly rules: PoolRules;
  readonly blocked: Blocked;
}

/** Builds the shape of a rollout over its pool's machines. */
export function shapeRollout(input: ShapeInput): RolloutShape {
  const { all, pool, rollout: r, rules, blocked } = input;
  const o = ordered(all, pool, r, rules);
  const entries = entriesOf(o, r, rules, blocked);
  const t: Tally = {
    ...{ canaryOpen: 0, canaryLastFinish: undefined, failed: 0, skipped: 0, open: 0 },
    ...{ batchOpen: [0], batchLastFinish: [-Infinity], zoneMin: new Map<Role, number>() },
  };
  for (const e of entries) count(t, e, blocked);
  return {
    ...t,
    ...{ rollout: r, rules, entries, zoneNames: o.zoneNames },
    ...waves(t.batchOpen, t.batchLastFinish),
  };
}

function waves(open: readonly number[], lastFinish: readonly number[]) {
  let firstOpenBatch = Infinity;
  const finishBefore: number[] = [-Infinity, -Infinity];
  for (let b = 1; b < open.length; b++) {
    if ((open[b] ?? 0) > 0 && b < firstOpenBatch) firstOpenBatch = b;
    finishBefore[b + 1] = Math.max(finishBefore[b] ?? -Infinity, lastFinish[b] ?? -Infinity);
  }
  return { firstOpenBatch, finishBefore };
}
