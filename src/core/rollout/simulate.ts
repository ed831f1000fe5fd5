// SPDX-License-Identifier: Apache-2.0
/**
 * simulate(): `molt plan`'s prediction (ADR 0005 §1). Runs the same plan() forward on a model
 * clock: every admitted machine is InFlight and succeeds `upgradeMs` later; the clock jumps to the
 * next instant at which a decision can change — a completion, or the `notBefore` of a wait or a
 * soak (a window opening, a rate slot freeing, a soak ending, the phased fraction reaching a
 * machine, a hold expiring). Waits without a known end (concurrency, control plane, canaries
 * running) change only at completions, which are events too. Nothing fails in the model.
 */
import { plan } from './plan.ts';
import type {
  FleetSnapshot,
  MachineDecision,
  MachineProgress,
  Plan,
  Rollout,
  RolloutVerdict,
  StartRecord,
} from './types.ts';

export interface SimulateOptions {
  /** Estimated duration of one machine upgrade. */
  readonly upgradeMs: number;
  /** Stop predicting starts after `from + horizonMs`. @default 30 days */
  readonly horizonMs?: number;
  /** Bound on plan() evaluations. @default 10 000 */
  readonly maxSteps?: number;
}

export interface ScheduledStart {
  readonly rollout: string;
  readonly machine: string;
  readonly batch: number;
  /** Index of the simulation step (distinct start instant) that started it. */
  readonly step: number;
  readonly startAt: number;
  readonly finishAt: number;
}

export interface NeverStarted {
  readonly rollout: string;
  readonly machine: string;
  readonly reason: { readonly code: string; readonly message: string };
  readonly notBefore?: number;
}

export interface Schedule {
  readonly from: number;
  /** The last predicted finish (`from` when nothing runs). */
  readonly end: number;
  readonly starts: readonly ScheduledStart[];
  /** Machines still waiting when the simulation stopped, with their last reason. */
  readonly unscheduled: readonly NeverStarted[];
  readonly verdicts: readonly RolloutVerdict[];
  readonly steps: number;
}

const DAY = 86_400_000;

/** The model: rollouts with mutable progress, the start history and the running upgrades. */
interface Model {
  readonly rollouts: Map<string, { rollout: Rollout; progress: Record<string, MachineProgress> }>;
  starts: StartRecord[];
  readonly running: { rollout: string; machine: string; finishAt: number }[];
  readonly pools: ReadonlyMap<string, string>;
}

function modelOf(snapshot: FleetSnapshot, from: number, upgradeMs: number): Model {
  const rollouts: Model['rollouts'] = new Map();
  const running: Model['running'] = [];
  for (const r of snapshot.rollouts) {
    const progress = { ...r.machines };
    rollouts.set(r.id, { rollout: { ...r, machines: progress }, progress });
    for (const [machine, p] of Object.entries(progress)) {
      if (p.phase !== 'InFlight') continue;
      const finishAt = Math.max((p.startedAt ?? from) + upgradeMs, from);
      running.push({ rollout: r.id, machine, finishAt });
    }
  }
  const pools = new Map(snapshot.machines.map((m) => [m.id, m.pool]));
  return { rollouts, starts: [...snapshot.starts], running, pools };
}

/** Marks upgrades finished by `t` as Succeeded. */
function finishUpTo(model: Model, t: number): void {
  for (let i = model.running.length - 1; i >= 0; i--) {
    const run = model.running[i];
    if (run === undefined || run.finishAt > t) continue;
    const entry = model.rollouts.get(run.rollout);
    const before = entry?.progress[run.machine];
    if (entry !== undefined) {
      entry.progress[run.machine] = { ...before, phase: 'Succeeded', finishedAt: run.finishAt };
    }
    model.running.splice(i, 1);
  }
}

function applyStart(model: Model, d: MachineDecision, t: number, upgradeMs: number): void {
  const entry = model.rollouts.get(d.rollout);
  if (entry === undefined) return;
  entry.progress[d.machine] = { phase: 'InFlight', startedAt: t };
  const pool = model.pools.get(d.machine) ?? entry.rollout.pool;
  model.starts.push({ machine: d.machine, pool, rollout: d.rollout, at: t });
  model.running.push({ rollout: d.rollout, machine: d.machine, finishAt: t + upgradeMs });
}

/** The next instant after `t` at which a decision can change. */
function nextEvent(model: Model, p: Plan, t: number): number | undefined {
  let next = Infinity;
  for (const run of model.running) if (run.finishAt > t) next = Math.min(next, run.finishAt);
  for (const d of p.decisions) {
    if (d.notBefore !== undefined && d.notBefore > t) next = Math.min(next, d.notBefore);
  }
  return next === Infinity ? undefined : next;
}

function snapshotAt(base: FleetSnapshot, model: Model, longestPeriod: number, t: number) {
  // Starts older than every rate period can never count again; dropping them keeps steps cheap.
  model.starts = model.starts.filter((s) => s.at > t - longestPeriod);
  const rollouts = [...model.rollouts.values()].map((e) => e.rollout);
  return { ...base, rollouts, starts: model.starts };
}

function longestRatePeriod(s: FleetSnapshot): number {
  const all = [...s.fleetPolicies, ...s.pools.flatMap((p) => p.policies)];
  return Math.max(0, ...all.map((p) => (p.kind === 'rate' ? p.periodMs : 0)));
}

function waits(p: Plan): NeverStarted[] {
  return p.decisions.flatMap((d) => {
    if (d.action !== 'wait' || d.reason === undefined) return [];
    const base = { rollout: d.rollout, machine: d.machine, reason: d.reason };
    return [d.notBefore === undefined ? base : { ...base, notBefore: d.notBefore }];
  });
}

/** Predicts when each machine starts and finishes; see the module comment. */
export function simulate(
  snapshot: FleetSnapshot,
  from: number,
  options: SimulateOptions,
): Schedule {
  const { upgradeMs, horizonMs = 30 * DAY, maxSteps = 10_000 } = options;
  const model = modelOf(snapshot, from, upgradeMs);
  const period = longestRatePeriod(snapshot);
  const starts: ScheduledStart[] = [];
  let t = from;
  let last: Plan = { at: from, decisions: [], rollouts: [] };
  let steps = 0;
  while (steps < maxSteps) {
    steps++;
    finishUpTo(model, t);
    last = plan(snapshotAt(snapshot, model, period, t), t);
    for (const d of last.decisions) {
      if (d.action !== 'start') continue;
      applyStart(model, d, t, upgradeMs);
      const { rollout, machine, batch } = d;
      starts.push({
        rollout,
        machine,
        batch,
        step: steps - 1,
        startAt: t,
        finishAt: t + upgradeMs,
      });
    }
    const next = nextEvent(model, last, t);
    if (next === undefined || next > from + horizonMs) break;
    t = next;
  }
  const end = [...model.running, ...starts].reduce((a, r) => Math.max(a, r.finishAt), from);
  return { from, end, starts, unscheduled: waits(last), verdicts: last.rollouts, steps };
}
