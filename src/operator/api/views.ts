// SPDX-License-Identifier: Apache-2.0
/**
 * The store's records as the API's views (protocol/operator.ts): epoch ms become ISO strings, a
 * rollout lists every machine of its pool (those without progress are Pending), and the planner's
 * current decision joins a machine's progress when the operator has observed that machine.
 */
import { instant, iso } from '../../core/time.ts';
import { heldUntil } from '../../core/quoted-reasons.ts';
import {
  WaitReason,
  type Machine,
  type MachineDecision,
  type MachinePhase,
  type Rollout,
} from '../../core/rollout/types.ts';
import type { ImageRolloutRecord } from '../../core/images/workload.ts';
import type {
  DecisionView,
  ImageRolloutView,
  HistoryEventView,
  MachineProgressView,
  RolloutCounts,
  RolloutSummaryView,
  RolloutView,
} from '../../protocol/operator.ts';
import { emptyCounts } from '../../protocol/operator.ts';
import type { HistoryEvent, MachineRecord } from '../ports/store.ts';

/** Decisions of one plan, by `rollout/machine`. */
export type DecisionIndex = ReadonlyMap<string, MachineDecision>;

export const decisionKey = (rollout: string, machine: string): string => `${rollout}/${machine}`;

export function decisionView(d: MachineDecision): DecisionView {
  return {
    action: d.action,
    ...(d.reason !== undefined && { reason: { code: d.reason.code, message: d.reason.message } }),
    batch: d.batch,
    ...(d.notBefore !== undefined && { notBefore: iso(d.notBefore) }),
  };
}

/**
 * Machine ids of the rollout: its pool's managed machines (an image rollout's workloads: those it
 * changed, then those the image driver's last plan decided on), then any with progress no longer
 * managed.
 */
function memberIds(r: Rollout, machines: readonly MachineRecord[], d: DecisionIndex): string[] {
  const prefix = decisionKey(r.id, '');
  const ids =
    r.images === undefined
      ? machines.filter((m) => m.pool === r.pool).map((m) => m.id)
      : [
          ...new Set([
            ...Object.keys(r.images.units),
            ...[...d.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)),
          ]),
        ];
  const known = new Set(ids);
  return [...ids, ...Object.keys(r.machines).filter((id) => !known.has(id))];
}

/** The rollout-wide waits that the planner names before a machine's own (its hold). */
const rolloutWide: ReadonlySet<string> = new Set([
  WaitReason.Paused,
  WaitReason.AwaitingApproval,
  WaitReason.Halted,
]);

/**
 * A machine waiting on its rollout (paused, awaiting approval, halted) that is also held says
 * both: the person who resumes the rollout must know this machine still will not start.
 */
function withHold(d: MachineDecision, hold: Machine['hold'], now: number): MachineDecision {
  const reason = d.reason;
  if (d.action !== 'wait' || reason === undefined || !rolloutWide.has(reason.code)) return d;
  if (hold === undefined || hold.until <= now) return d;
  const held = heldUntil(instant(hold.until), hold.reason);
  return { ...d, reason: { code: reason.code, message: `${reason.message}; also ${held}` } };
}

/** A machine holding the release staged shows the operation its start will apply. */
const stagedOperation = (r: Rollout, id: string, marked: boolean): string | undefined =>
  marked ? r.staged?.[id]?.operationId : undefined;

function progressView(
  r: Rollout,
  id: string,
  decision: MachineDecision | undefined,
  staged: boolean,
): MachineProgressView {
  const p = r.machines[id] ?? { phase: 'Pending' as MachinePhase };
  const marked = staged && p.phase === 'Pending';
  const operationId = p.operationId ?? stagedOperation(r, id, marked);
  return {
    machine: id,
    phase: p.phase,
    ...(p.startedAt !== undefined && { startedAt: iso(p.startedAt) }),
    ...(p.finishedAt !== undefined && { finishedAt: iso(p.finishedAt) }),
    ...(p.reason !== undefined && { reason: p.reason }),
    ...(operationId !== undefined && { operationId }),
    ...(decision !== undefined && { decision: decisionView(decision) }),
    ...(marked && { staged: true }),
  };
}

function countsOf(progress: readonly MachineProgressView[]): RolloutCounts {
  const counts = emptyCounts(progress.length);
  for (const p of progress) {
    counts[p.phase]++;
    if (p.phase === 'Pending' && p.decision?.action === 'skipped') counts.skipped++;
  }
  return counts;
}

/** What the views of rollouts need besides the rollout. */
export interface RolloutContext {
  readonly machines: readonly MachineRecord[];
  readonly decisions: DecisionIndex;
  /** Whether the operator has observed a machine (decisions on unobserved machines are guesses). */
  readonly observed: (machine: string) => boolean;
  /** The planner's holds by machine (the store's and declared ones), and now: which still last. */
  readonly holds: ReadonlyMap<string, Machine['hold']>;
  /** `rollout/machine` of the machines whose agent holds their rollout's release staged. */
  readonly staged: ReadonlySet<string>;
  readonly now: number;
}

export function rolloutView(r: Rollout, c: RolloutContext): RolloutView {
  const machines = memberIds(r, c.machines, c.decisions).map((id) => {
    const key = decisionKey(r.id, id);
    const d = c.observed(id) ? c.decisions.get(key) : undefined;
    const decision = d === undefined ? undefined : withHold(d, c.holds.get(id), c.now);
    return progressView(r, id, decision, c.staged.has(key));
  });
  return { ...rolloutSummary(r, machines), machines };
}

function rolloutSummary(r: Rollout, machines: readonly MachineProgressView[]): RolloutSummaryView {
  return {
    id: r.id,
    pool: r.pool,
    target: { version: r.target.version, digest: r.target.digest },
    ...(r.from !== undefined && { from: { version: r.from.version, digest: r.from.digest } }),
    ...(r.path !== undefined && { path: [...r.path] }),
    ...(r.endReason !== undefined && { endReason: r.endReason }),
    ...(r.stateReason !== undefined && { stateReason: r.stateReason }),
    ...(r.repairOf !== undefined && { repairOf: r.repairOf }),
    state: r.state,
    createdAt: iso(r.createdAt),
    counts: countsOf(machines),
    ...(r.rollbackOf !== undefined && { rollbackOf: r.rollbackOf }),
    ...(r.images !== undefined && { images: imageRecordView(r.images) }),
  };
}

function imageRecordView(i: ImageRolloutRecord): ImageRolloutView {
  return {
    policy: i.policy,
    repository: i.repository,
    units: Object.fromEntries(
      Object.entries(i.units).map(([id, u]) => [
        id,
        { changes: u.changes.map((c) => ({ container: c.container, from: c.from, to: c.to })) },
      ]),
    ),
  };
}

/** The summary of a rollout (`GET /v1/rollouts`). */
export function summaryView(r: Rollout, c: RolloutContext): RolloutSummaryView {
  return rolloutSummary(r, rolloutView(r, c).machines);
}

export function historyView(e: HistoryEvent): HistoryEventView {
  return {
    seq: e.seq,
    at: iso(e.at),
    kind: e.kind,
    ...(e.rollout !== undefined && { rollout: e.rollout }),
    ...(e.machine !== undefined && { machine: e.machine }),
    message: e.message,
    ...(e.data !== undefined && { data: { ...e.data } }),
  };
}
