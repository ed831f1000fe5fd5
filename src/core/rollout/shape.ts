// SPDX-License-Identifier: Apache-2.0
/**
 * The structure of one rollout (ADR 0005 §1–2): its machines in order — control plane first, then
 * by zone (with one-zone-at-a-time), then by the stable hash of (rollout, machine) — with the
 * canary set (the machines that started as canaries, then the first that can start), the waves (batches of the tightest
 * concurrency limit, with a batch soak) and the current zone per role. A later group waits until
 * every machine of the earlier ones is finished — except, for waves and zones, machines that cannot
 * start on their own account (see {@link Blocked}): one machine that is down must not stall a fleet.
 * The order itself is machine-order.ts; a shape is made every plan, so it makes no garbage per
 * machine that outlives the plan's pass over it.
 */
import type { PoolRules } from './rules.ts';
import type { Machine, MachinePhase, MachineProgress, Role, Rollout } from './types.ts';
import { ordered, type Ordered } from './machine-order.ts';
import { passedOver, type Reason } from './skip.ts';

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
  /** How many machines the rollout judges; {@link entryAt} gives each, in order. */
  readonly size: number;
  /** What {@link entryAt} reads. */
  readonly layout: Layout;
  readonly zoneNames: readonly string[];
  /** Canaries Pending or InFlight, of them InFlight; the latest canary finish. */
  readonly canaryOpen: number;
  readonly canaryInFlight: number;
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

/**
 * What the rollout's record says of each machine, by position in the rollout's order: its
 * progress, why a Pending one is skipped, and whether a Pending one is {@link Blocked}. Read in
 * the pool's order, stored in the rollout's: the pool is in the snapshot's (memory) order, the
 * rollout's order is a random permutation of it, and on 100 000 machines each pass that reads
 * machines, or arrays indexed by pool, in the rollout's order cost ~10 ms of cache misses.
 */
interface Records {
  readonly progress: readonly (MachineProgress | undefined)[];
  readonly skips: readonly (Reason | undefined)[];
  readonly blocked: Uint8Array;
}

function recordsOf(o: Ordered, input: ShapeInput): Records {
  const { pool, rollout: r, blocked } = input;
  // Sized up front: grown by push, their copies were megabytes of garbage a plan.
  const progress = new Array<MachineProgress | undefined>(pool.length).fill(undefined);
  const skips = new Array<Reason | undefined>(pool.length).fill(undefined);
  const isBlocked = new Uint8Array(pool.length);
  pool.forEach((m, i) => {
    const k = o.position[i] ?? 0;
    const p = r.machines[m.id];
    const pending = (p?.phase ?? 'Pending') === 'Pending';
    const skip = pending
      ? passedOver(m, r, { onHold: input.rules.onHold, now: input.now })
      : undefined;
    progress[k] = p;
    skips[k] = skip;
    if (pending && skip === undefined && blocked(m)) isBlocked[k] = 1;
  });
  return { progress, skips, blocked: isBlocked };
}

/**
 * The canaries, flagged by position: machines that already started take the slots first (a
 * canary stays one once it ran), then, in order, Pending machines that can start now — a held,
 * down or busy machine is never picked, so the canary phase does not wait on it while free
 * machines idle. It joins a wave when it can.
 */
function canariesOf(records: Records, slots: number): Uint8Array {
  const { progress, skips, blocked } = records;
  const chosen = new Uint8Array(progress.length);
  let count = 0;
  const pending = (k: number): boolean => (progress[k]?.phase ?? 'Pending') === 'Pending';
  for (let k = 0; k < progress.length && count < slots; k++) {
    if (skips[k] !== undefined || pending(k)) continue;
    chosen[k] = 1;
    count++;
  }
  for (let k = 0; k < progress.length && count < slots; k++) {
    if (skips[k] !== undefined || !pending(k) || blocked[k] === 1) continue;
    chosen[k] = 1;
    count++;
  }
  return chosen;
}

/**
 * The rollout's machines as {@link entryAt} reads them. Entries are made when asked, not kept: a
 * plan holds 100 000 of them only for a moment each, so the young-generation collector never has
 * to copy them.
 */
export interface Layout {
  readonly pool: readonly Machine[];
  readonly ordered: Ordered;
  readonly records: Records;
  /** Per position in the order: 0 canary, 1.. wave (1 for a skipped machine). */
  readonly batches: Int32Array;
}

function entryOf({ pool, ordered: o, records, batches }: Layout, k: number): Entry {
  const progress = records.progress[k];
  const skip = records.skips[k];
  const batch = batches[k] ?? 1;
  return {
    machine: pool[o.order[k] ?? 0] as Machine,
    progress,
    phase: progress?.phase ?? 'Pending',
    skip,
    canary: skip === undefined && batch === 0,
    batch,
    zoneRank: o.ranks[k] ?? 0,
  };
}

/** The machine at position `k` (0 ≤ k < `shape.size`) of the rollout's order. */
export const entryAt = (shape: RolloutShape, k: number): Entry => entryOf(shape.layout, k);

/** Lays the rollout out (canaries, waves), counting each entry into `t` in order. */
function layOut(o: Ordered, input: ShapeInput, t: Tally): Layout {
  const { pool, rules } = input;
  const size = rules.batches === undefined ? Infinity : rules.batchSize;
  const records = recordsOf(o, input);
  const canaries = canariesOf(records, rules.canary?.count ?? 0);
  const batches = new Int32Array(o.order.length);
  const layout: Layout = { pool, ordered: o, records, batches };
  let taken = 0;
  for (let k = 0; k < o.order.length; k++) {
    let batch = 0; // a canary
    if (records.skips[k] !== undefined) batch = 1;
    else if (canaries[k] === 0) batch = 1 + Math.floor(taken++ / size);
    batches[k] = batch;
    count(t, entryOf(layout, k), records.blocked[k] === 1);
  }
  return layout;
}

const isOpen = (e: Entry): boolean =>
  e.skip === undefined && (e.phase === 'Pending' || e.phase === 'InFlight');

const maxOf = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

/** The running totals of one pass over a rollout's entries. */
interface Tally {
  canaryOpen: number;
  canaryInFlight: number;
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

function count(t: Tally, e: Entry, blocked: boolean): void {
  const unfinished = isOpen(e);
  if (unfinished) t.open++;
  if (e.phase === 'Failed' || e.phase === 'RolledBack') t.failed++;
  if (e.phase === 'Skipped') t.skipped++;
  if (e.skip !== undefined) return;
  if (e.canary) countCanary(t, e, unfinished);
  else countWave(t, e, unfinished && !(e.phase === 'Pending' && blocked));
}

function countCanary(t: Tally, e: Entry, unfinished: boolean): void {
  t.canaryOpen += unfinished ? 1 : 0;
  t.canaryInFlight += unfinished && e.phase === 'InFlight' ? 1 : 0;
  t.canaryLastFinish = maxOf(t.canaryLastFinish, e.progress?.finishedAt);
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
  /** Epoch ms: whether a hold still lasts (a pool with `onHold: skip` passes over held machines). */
  readonly now: number;
}

/** Builds the shape of a rollout over its pool's machines. */
export function shapeRollout(input: ShapeInput): RolloutShape {
  const { all, pool, rollout: r, rules } = input;
  const o = ordered(all, pool, r, rules);
  const t: Tally = {
    ...{ canaryOpen: 0, canaryInFlight: 0, canaryLastFinish: undefined },
    ...{ failed: 0, skipped: 0, open: 0 },
    ...{ batchOpen: [0], batchLastFinish: [-Infinity], zoneMin: new Map<Role, number>() },
  };
  const layout = layOut(o, input, t);
  return {
    ...t,
    ...{ rollout: r, rules, size: o.order.length, layout, zoneNames: o.zoneNames },
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
