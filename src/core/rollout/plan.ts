// SPDX-License-Identifier: Apache-2.0
/**
 * plan(snapshot, now) → Plan (ADR 0005 §1–2): one pure function decides which machines start.
 * Rollouts are taken oldest first; inside a rollout machines are judged in order (control plane,
 * canaries, zones, stable hash) and admitted greedily while every check allows them, each
 * admission updating the tallies later candidates see. No clock, no I/O, no randomness: the
 * executor starts exactly the `start` decisions and `molt plan` simulates the same function.
 */
import {
  allRefusals,
  firstRefusal,
  phasedFraction,
  type Candidate,
  type Refusal,
} from './checks.ts';
import { buildContext, markUnavailable, oldestFirst, type PlanContext } from './context.ts';
import { plural } from './format.ts';
import { entryAt, shapeRollout, type RolloutShape } from './shape.ts';
import type {
  FleetSnapshot,
  Machine,
  MachineDecision,
  Plan,
  Rollout,
  RolloutVerdict,
} from './types.ts';
import { warinessOf } from './wariness.ts';
import { etcdDowntime } from './small-control-plane.ts';

export { oldestFirst };

function decision(c: Candidate, action: MachineDecision['action']): MachineDecision {
  return { rollout: c.shape.rollout.id, machine: c.entry.machine.id, action, batch: c.entry.batch };
}

type Reason = NonNullable<MachineDecision['reason']>;

/** One reason object per refusal, shared by every machine it refuses (no garbage per machine). */
const reasons = new WeakMap<Refusal, Reason>();
/** The last refusal seen and its reason: a limit refuses thousands of machines in a row. */
let last: { readonly refusal: Refusal; readonly reason: Reason } | undefined;

function reasonOf(refusal: Refusal): Reason {
  if (last?.refusal === refusal) return last.reason;
  let reason = reasons.get(refusal);
  if (reason === undefined) {
    reason = { code: refusal.code, message: refusal.message };
    reasons.set(refusal, reason);
  }
  last = { refusal, reason };
  return reason;
}

function waiting(c: Candidate, refusal: Refusal): MachineDecision {
  const reason = reasonOf(refusal);
  const rollout = c.shape.rollout.id;
  const machine = c.entry.machine.id;
  const { batch } = c.entry;
  const { notBefore } = refusal;
  // One literal per case, not a spread of a shared part: this runs for every waiting machine.
  return notBefore === undefined
    ? { rollout, machine, action: 'wait', reason, batch }
    : { rollout, machine, action: 'wait', reason, batch, notBefore };
}

/** Takes the machine: it now counts as unavailable in its pool, the fleet, its cluster and rates. */
function admit(c: Candidate): MachineDecision {
  const m = c.entry.machine;
  markUnavailable(c.ctx, m, `starting in rollout ${c.shape.rollout.id}`, true);
  for (const rule of c.shape.rules.rates) rule.admitted++;
  c.ctx.admissions++;
  const downtime = etcdDowntime(c.ctx.snapshot, m);
  return downtime === undefined
    ? decision(c, 'start')
    : { ...decision(c, 'start'), reason: downtime };
}

function decidePending(c: Candidate): MachineDecision {
  const { entry, shape } = c;
  if (entry.skip !== undefined) return { ...decision(c, 'skipped'), reason: entry.skip };
  if (shape.rollout.state === 'Completed') {
    const reason = {
      code: 'RolloutCompleted',
      message: `rollout ${shape.rollout.id} is completed`,
    };
    return { ...decision(c, 'skipped'), reason };
  }
  const refusal = firstRefusal(c);
  return refusal === undefined ? admit(c) : waiting(c, refusal);
}

function decide(c: Candidate): MachineDecision {
  const { entry, ctx, shape } = c;
  switch (entry.phase) {
    case 'Pending':
      return decidePending(c);
    case 'InFlight':
      return decision(c, 'in-flight');
    case 'Succeeded': {
      const end = (entry.progress?.finishedAt ?? -Infinity) + shape.rules.machineSoakMs;
      if (end <= ctx.now) return decision(c, 'done');
      return { ...decision(c, 'soaking'), notBefore: end };
    }
    case 'Failed':
    case 'RolledBack':
    case 'Skipped':
      return finishedBadly(c, entry.phase);
  }
}

/** A machine the rollout is done with that did not succeed: failed, or set aside (`Skipped`). */
function finishedBadly(c: Candidate, phase: 'Failed' | 'RolledBack' | 'Skipped'): MachineDecision {
  const message = c.entry.progress?.reason ?? phase;
  return {
    ...decision(c, phase === 'Skipped' ? 'skipped' : 'failed'),
    reason: { code: phase, message },
  };
}

function verdictOf(shape: RolloutShape, halted: boolean, soaking: number): RolloutVerdict {
  const r = shape.rollout;
  // An image rollout's units are workloads (docs/adr/0013): its messages say so.
  const unit = r.images === undefined ? 'machine' : 'workload';
  if (halted || r.state === 'Halted') {
    const message = `failure budget: ${plural(shape.failed, unit)} failed (budget ${shape.rules.maxFailed})`;
    return { rollout: r.id, verdict: 'halt', message };
  }
  if (r.state === 'Completed' || (shape.open === 0 && soaking === 0)) {
    const skipped = shape.skipped > 0 ? `, ${plural(shape.skipped, unit)} skipped` : '';
    const message = `every ${unit} finished (${plural(shape.failed, 'failure')}${skipped})`;
    return { rollout: r.id, verdict: 'complete', message };
  }
  return { rollout: r.id, verdict: 'continue' };
}

/** A Pending machine that cannot start on its own account (ADR: machine and phased checks). */
function blockedIn(ctx: PlanContext, r: Rollout): (m: Machine) => boolean {
  const fraction = phasedFraction(r, ctx.now);
  return (m) =>
    ctx.unavailable.has(m) ||
    (m.hold !== undefined && m.hold.until > ctx.now) ||
    (r.phased !== undefined && warinessOf(m) > fraction);
}

function candidates(ctx: PlanContext, r: Rollout): { shape: RolloutShape; halted: boolean } {
  const rules = ctx.rulesFor(r.pool);
  const pool = ctx.byPool.get(r.pool) ?? [];
  const all = ctx.snapshot.machines;
  const blocked = blockedIn(ctx, r);
  const shape = shapeRollout({ all, pool, rollout: r, rules, blocked, now: ctx.now });
  const halted = r.state !== 'Completed' && shape.failed >= rules.maxFailed;
  return { shape, halted };
}

/** Decides every machine of every rollout at `now`; see the module comment. */
export function plan(snapshot: FleetSnapshot, now: number): Plan {
  const ctx = buildContext(snapshot, now);
  const decisions: MachineDecision[] = [];
  const rollouts: RolloutVerdict[] = [];
  for (const r of oldestFirst(snapshot.rollouts)) {
    const { shape, halted } = candidates(ctx, r);
    let soaking = 0;
    if (shape.size === 0) {
      rollouts.push(verdictOf(shape, halted, 0));
      continue;
    }
    const c: Candidate = { ctx, shape, entry: entryAt(shape, 0), halted };
    for (let k = 0; k < shape.size; k++) {
      c.entry = entryAt(shape, k);
      const d = decide(c);
      if (d.action === 'soaking') soaking++;
      decisions.push(d);
    }
    rollouts.push(verdictOf(shape, halted, soaking));
  }
  return { at: now, decisions, rollouts };
}

/** Every check that refuses each waiting machine (`molt plan --explain`), keyed `rollout/machine`. */
export function explain(snapshot: FleetSnapshot, now: number): Map<string, Refusal[]> {
  const ctx = buildContext(snapshot, now);
  const out = new Map<string, Refusal[]>();
  for (const r of oldestFirst(snapshot.rollouts)) {
    const { shape, halted } = candidates(ctx, r);
    for (let k = 0; k < shape.size; k++) {
      const entry = entryAt(shape, k);
      if (entry.phase !== 'Pending' || entry.skip !== undefined) continue;
      const c = { ctx, shape, entry, halted };
      const refusals = allRefusals(c);
      if (refusals.length === 0) admit(c);
      else out.set(`${r.id}/${entry.machine.id}`, refusals);
    }
  }
  return out;
}
