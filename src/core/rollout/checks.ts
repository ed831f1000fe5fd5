// SPDX-License-Identifier: Apache-2.0
/**
 * The admission checks of ADR 0005 §2, in the order of its table; the first refusal is the reason
 * shown. Each check is O(policies) over the tallies of the plan context, never a scan of machines.
 */
import { clusterOf, type PlanContext } from './context.ts';
import { humanDuration, instant } from '../time.ts';
import { plural } from './format.ts';
import { scopeLabel, type PoolRules } from './rules.ts';
import {
  memoized,
  perPlan,
  perShape,
  type Candidate,
  type Check,
  type Refusal,
} from './candidate.ts';
import { WaitReason, type Rollout } from './types.ts';
import { warinessOf } from './wariness.ts';
import { smallControlPlaneRefusal } from './small-control-plane.ts';
import { heldUntil } from '../quoted-reasons.ts';

const rolloutState = (c: Candidate): Refusal | undefined =>
  c.shape.rollout.state === 'Active' && !c.halted ? undefined : perShape(c, -1, stateRefusal);

function stateRefusal({ shape, halted }: Candidate): Refusal | undefined {
  const r = shape.rollout;
  if (r.state === 'Paused')
    return { code: WaitReason.Paused, message: `rollout ${r.id} is paused` };
  if (r.state === 'AwaitingApproval') {
    const message = `rollout ${r.id} awaits approval (molt rollout approve ${r.id})`;
    return { code: WaitReason.AwaitingApproval, message };
  }
  if (r.state === 'Halted' || halted) {
    const message = `rollout ${r.id} is halted: ${shape.failed} failed (budget ${shape.rules.maxFailed})`;
    return { code: WaitReason.Halted, message };
  }
  return undefined;
}

function machine({ ctx, entry }: Candidate): Refusal | undefined {
  const m = entry.machine;
  if (m.hold !== undefined && m.hold.until > ctx.now) {
    const message = heldUntil(instant(m.hold.until), m.hold.reason);
    return { code: WaitReason.Held, message, notBefore: m.hold.until };
  }
  const why = ctx.unavailable.get(m);
  if (why === undefined) return undefined;
  let byWhy = unavailableMemos.get(ctx);
  if (byWhy === undefined) {
    byWhy = new Map();
    unavailableMemos.set(ctx, byWhy);
  }
  let refusal = byWhy.get(why);
  if (refusal === undefined) {
    refusal = { code: WaitReason.MachineUnavailable, message: `machine ${why}` };
    byWhy.set(why, refusal);
  }
  return refusal;
}

/** One MachineUnavailable refusal per distinct cause (`down`, `upgrading in rollout r1`) per plan. */
const unavailableMemos = new WeakMap<PlanContext, Map<string, Refusal>>();

/** The phased fraction at `t`: `startFraction` at creation, rising linearly to 1. */
export function phasedFraction(r: Rollout, t: number): number {
  if (r.phased === undefined) return 1;
  const { startFraction: s, durationMs: d } = r.phased;
  const elapsed = d <= 0 ? 1 : Math.min(1, Math.max(0, (t - r.createdAt) / d));
  return s + (1 - s) * elapsed;
}

/** The first instant at which the fraction reaches `w`. */
function phasedAt(r: Rollout, w: number): number {
  const { startFraction: s, durationMs: d } = r.phased ?? { startFraction: 1, durationMs: 0 };
  let at = r.createdAt + Math.max(0, Math.ceil(((w - s) / (1 - s)) * d));
  while (phasedFraction(r, at) < w) at++;
  return at;
}

function phased({ ctx, shape, entry }: Candidate): Refusal | undefined {
  const r = shape.rollout;
  if (r.phased === undefined) return undefined;
  const w = warinessOf(entry.machine);
  const f = phasedFraction(r, ctx.now);
  if (w <= f) return undefined;
  const message = `phased: wariness ${w.toFixed(3)} above the current fraction ${f.toFixed(3)}`;
  return { code: WaitReason.PhasedNotYet, message, notBefore: phasedAt(r, w) };
}

const window = ({ ctx, shape }: Candidate): Refusal | undefined =>
  shape.rules.windows.length === 0 ? undefined : perPlan(ctx, shape.rules.windows, windowRefusal);

function windowRefusal(ctx: PlanContext, rules: PoolRules['windows']): Refusal | undefined {
  const closed = rules.map((r) => ctx.windows.verdict(r)).filter((v) => !v.open);
  const first = closed[0];
  if (first === undefined) return undefined;
  // Every window policy must be open: the start waits at least for the latest of their openings.
  const openings = closed.flatMap((v) => (v.opening === undefined ? [] : [v.opening.at]));
  const refusal = { code: WaitReason.WindowClosed, message: first.message };
  if (openings.length < closed.length) return refusal;
  return { ...refusal, notBefore: Math.max(...openings) };
}

const gate = ({ ctx, shape }: Candidate): Refusal | undefined =>
  shape.rules.gates.length === 0 ? undefined : perPlan(ctx, shape.rules.gates, gateRefusal);

/** Health gates before each start: every gate that applies must have passed its last check. */
function gateRefusal(ctx: PlanContext, gates: PoolRules['gates']): Refusal | undefined {
  for (const g of gates) {
    const result = ctx.snapshot.gates?.[g.name];
    if (result?.ok === true) continue;
    const message = `health gate ${g.name} ${result === undefined ? 'not checked yet' : `failing: ${result.message}`}`;
    return { code: WaitReason.GateFailing, message };
  }
  return undefined;
}

const rate = ({ ctx, shape }: Candidate): Refusal | undefined =>
  shape.rules.rates.length === 0 ? undefined : memoized(ctx, shape.rules.rates, rateRefusal);

function rateRefusal(ctx: PlanContext, rules: PoolRules['rates']): Refusal | undefined {
  let refusal: Refusal | undefined;
  for (const rule of rules) {
    const used = rule.times.length + rule.admitted;
    if (used < rule.count) continue;
    // The (used − count)-th oldest start must leave the window; admitted starts are at `now`.
    const oldest = rule.times[used - rule.count] ?? ctx.now;
    const notBefore = Math.max(oldest + rule.periodMs, refusal?.notBefore ?? -Infinity);
    const message =
      refusal?.message ??
      `rate limit of ${scopeLabel(rule.scope)} reached: ${plural(used, 'start')} in the last ` +
        `${humanDuration(rule.periodMs)} (limit ${rule.count}); next slot ${instant(notBefore)}`;
    refusal = { code: WaitReason.RateLimited, message, notBefore };
  }
  return refusal;
}

const concurrency = ({ ctx, shape }: Candidate): Refusal | undefined =>
  shape.rules.concurrency.length === 0
    ? undefined
    : memoized(ctx, shape.rules.concurrency, concurrencyRefusal);

function concurrencyRefusal(
  ctx: PlanContext,
  rules: PoolRules['concurrency'],
): Refusal | undefined {
  for (const rule of rules) {
    const n = ctx.scopeCount.get(rule.scope) ?? 0;
    if (n < rule.limit) continue;
    const message =
      `${n} of ${rule.limit} machines of ${scopeLabel(rule.scope)} unavailable ` +
      `(limit ${rule.describe})`;
    return { code: WaitReason.ConcurrencyFull, message };
  }
  return undefined;
}

function controlPlane({ ctx, entry }: Candidate): Refusal | undefined {
  const m = entry.machine;
  if (m.role !== 'control-plane') return undefined;
  const cluster = clusterOf(m);
  const state = ctx.clusters.get(cluster);
  if (state !== undefined && state.upgrading > 0) {
    const message = `control-plane machine ${state.upgradingId ?? '?'} of cluster ${cluster} is upgrading (one at a time)`;
    return { code: WaitReason.ControlPlaneBusy, message };
  }
  if (state !== undefined && state.down > 0) {
    const message = `${plural(state.down, 'other control-plane machine')} of cluster ${cluster} unavailable; a start would risk etcd quorum`;
    return { code: WaitReason.QuorumAtRisk, message };
  }
  const holder = ctx.snapshot.leases?.[cluster];
  if (holder !== undefined && holder !== m.id) {
    const message = `the control-plane lease of cluster ${cluster} is held by ${holder}`;
    return { code: WaitReason.ControlPlaneBusy, message };
  }
  return smallControlPlaneRefusal(ctx.snapshot, m);
}

const controlPlaneFirst = (c: Candidate): Refusal | undefined => {
  const m = c.entry.machine;
  if (m.role === 'control-plane' || !c.shape.rules.controlPlaneFirst) return undefined;
  const state = c.ctx.clusters.get(clusterOf(m));
  if (state === undefined || state.unfinished.size === 0) return undefined;
  return memoized(c.ctx, state, (_ctx, cluster) => {
    const n = plural(cluster.unfinished.size, 'control-plane machine');
    const message = `control plane first: ${n} of cluster ${clusterOf(m)} not upgraded yet`;
    return { code: WaitReason.ControlPlaneFirst, message };
  });
};

function canaryRefusal({ ctx, shape }: Candidate): Refusal | undefined {
  const policy = shape.rules.canary;
  if (policy === undefined) return undefined;
  if (shape.canaryInFlight > 0) {
    const message = `waits for ${plural(shape.canaryOpen, 'canary')} of ${policy.count} to finish`;
    return { code: WaitReason.CanaryRunning, message };
  }
  if (shape.canaryOpen > 0) {
    // None has started: "running" would be untrue while the rollout awaits approval or a window.
    const message = `waits for ${plural(shape.canaryOpen, 'canary')} of ${policy.count} to run first (none has started)`;
    return { code: WaitReason.CanaryPending, message };
  }
  const end = (shape.canaryLastFinish ?? -Infinity) + policy.soakMs;
  if (end <= ctx.now) return undefined;
  const message = `canaries soaking until ${instant(end)} (${humanDuration(policy.soakMs)})`;
  return { code: WaitReason.CanarySoaking, message, notBefore: end };
}

const canary = (c: Candidate): Refusal | undefined =>
  c.shape.rules.canary === undefined || c.entry.canary ? undefined : perShape(c, -2, canaryRefusal);

function waveRefusal({ ctx, shape, entry }: Candidate): Refusal | undefined {
  const policy = shape.rules.batches;
  if (policy === undefined) return undefined;
  const b = entry.batch;
  if (shape.firstOpenBatch < b) {
    const open = shape.batchOpen[shape.firstOpenBatch] ?? 0;
    const message = `wave ${b} waits for wave ${shape.firstOpenBatch} (${plural(open, 'machine')} not finished)`;
    return { code: WaitReason.BatchRunning, message };
  }
  const end = (shape.finishBefore[b] ?? -Infinity) + policy.soakMs;
  if (end <= ctx.now) return undefined;
  const message = `wave ${b - 1} soaking until ${instant(end)} (${humanDuration(policy.soakMs)})`;
  return { code: WaitReason.BatchSoaking, message, notBefore: end };
}

const batches = (c: Candidate): Refusal | undefined =>
  c.shape.rules.batches === undefined || c.entry.canary
    ? undefined
    : perShape(c, 1e6 + c.entry.batch, waveRefusal);

function zoneRefusal({ shape, entry }: Candidate): Refusal | undefined {
  const current = shape.zoneMin.get(entry.machine.role) ?? Infinity;
  if (entry.zoneRank <= current) return undefined;
  const name = (rank: number): string => shape.zoneNames[rank] ?? '?';
  const message = `zone ${name(entry.zoneRank)} waits for zone ${name(current)} (one zone at a time)`;
  return { code: WaitReason.ZoneWaiting, message };
}

const zones = (c: Candidate): Refusal | undefined => {
  const { shape, entry } = c;
  if (shape.rules.zones === undefined || entry.canary) return undefined;
  const role = entry.machine.role === 'control-plane' ? 0 : 1;
  return perShape(c, 2e6 + 2 * entry.zoneRank + role, zoneRefusal);
};

/** ADR 0005 §2, in table order. */
export const CHECKS: readonly Check[] = [
  rolloutState,
  machine,
  phased,
  window,
  gate,
  rate,
  concurrency,
  controlPlane,
  controlPlaneFirst,
  canary,
  batches,
  zones,
];

/** The first refusal, or undefined when every check allows the start. */
export function firstRefusal(c: Candidate): Refusal | undefined {
  // An index, not for…of: the iterator's result objects were a third of a plan's garbage.
  for (let i = 0; i < CHECKS.length; i++) {
    const refusal = CHECKS[i]?.(c);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

/** Every refusal (`molt plan --explain`). */
export function allRefusals(c: Candidate): Refusal[] {
  return CHECKS.map((check) => check(c)).filter((r): r is Refusal => r !== undefined);
}

export type { Candidate, Refusal };
