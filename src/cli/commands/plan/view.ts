// SPDX-License-Identifier: Apache-2.0
/**
 * What `molt plan` prints: the decisions now and the predicted schedule, as one view. `-o json|yaml`
 * print the view itself (times ISO 8601 UTC); the table adds times relative to the plan (`+1h20m`).
 */
import type { FleetSnapshot, Plan, Schedule } from '../../../core/rollout/index.ts';
import { formatDuration, instant } from '../../../core/time.ts';
import type { PrintColumn } from '../../../protocol/index.ts';
import { renderTable } from '../../output.ts';

export interface Reason {
  readonly code: string;
  readonly message: string;
}

/** One rollout and the planner's verdict on it. */
export interface RolloutRow {
  readonly rollout: string;
  readonly pool: string;
  readonly target: string;
  readonly state: string;
  /** The planner's verdict now, and at the end of the prediction. */
  readonly verdict: string;
  readonly message?: string;
  readonly predicted: string;
}

/** One machine of one rollout, now. */
export interface DecisionRow {
  readonly rollout: string;
  readonly machine: string;
  readonly action: string;
  /** 0 = canary; 1.. = wave. */
  readonly batch: number;
  readonly reason?: Reason;
  readonly notBefore?: string;
  /** Its rollout staged the release on it (docs/adr/0019): its start only reboots. */
  readonly staged?: boolean;
}

/** When one machine is predicted to upgrade. */
export interface ScheduleRow {
  readonly rollout: string;
  readonly machine: string;
  readonly batch: number;
  readonly start: string;
  readonly finish: string;
}

/** A machine that still waits when the horizon ends, and why. */
export interface WaitingRow {
  readonly rollout: string;
  readonly machine: string;
  readonly reason: Reason;
  readonly notBefore?: string;
}

/** Everything `molt plan` prints. Field names are a public contract (scripts read `-o json`). */
export interface PlanView {
  readonly fleet: string;
  readonly at: string;
  readonly upgradeMinutes: number;
  readonly horizon: string;
  /** The last predicted finish (`at` when nothing starts). */
  readonly end: string;
  readonly rollouts: readonly RolloutRow[];
  readonly decisions: readonly DecisionRow[];
  readonly schedule: readonly ScheduleRow[];
  readonly waiting: readonly WaitingRow[];
}

/** Inputs of {@link toPlanView}. */
export interface PlanRun {
  readonly fleet: string;
  readonly snapshot: FleetSnapshot;
  readonly plan: Plan;
  readonly schedule: Schedule;
  readonly upgradeMs: number;
  readonly horizonMs: number;
}

const iso = (at: number): string => new Date(at).toISOString().replace('.000Z', 'Z');

/** Build the view from a plan and a simulation. */
export function toPlanView(run: PlanRun): PlanView {
  const verdicts = new Map(run.plan.rollouts.map((v) => [v.rollout, v]));
  const predicted = new Map(run.schedule.verdicts.map((v) => [v.rollout, v.verdict]));
  return {
    fleet: run.fleet,
    at: iso(run.plan.at),
    upgradeMinutes: run.upgradeMs / 60_000,
    horizon: formatDuration(run.horizonMs),
    end: iso(run.schedule.end),
    rollouts: run.snapshot.rollouts.map((r) => {
      const v = verdicts.get(r.id);
      return {
        rollout: r.id,
        pool: r.pool,
        target: r.target.version,
        state: r.state,
        verdict: v?.verdict ?? '-',
        ...(v?.message !== undefined && { message: v.message }),
        predicted: predicted.get(r.id) ?? '-',
      };
    }),
    decisions: run.plan.decisions.map((d) => ({
      rollout: d.rollout,
      machine: d.machine,
      action: d.action,
      batch: d.batch,
      ...(d.reason !== undefined && { reason: { code: d.reason.code, message: d.reason.message } }),
      ...(d.notBefore !== undefined && { notBefore: iso(d.notBefore) }),
    })),
    schedule: run.schedule.starts.map((e) => ({
      rollout: e.rollout,
      machine: e.machine,
      batch: e.batch,
      start: iso(e.startAt),
      finish: iso(e.finishAt),
    })),
    waiting: run.schedule.unscheduled.map((w) => ({
      rollout: w.rollout,
      machine: w.machine,
      reason: { code: w.reason.code, message: w.reason.message },
      ...(w.notBefore !== undefined && { notBefore: iso(w.notBefore) }),
    })),
  };
}

/** `+1h20m` after the plan's instant (`-5m` before it). */
function relative(at: string, from: string): string {
  const ms = Date.parse(at) - Date.parse(from);
  return ms < 0 ? formatDuration(ms) : `+${formatDuration(ms)}`;
}

const batchLabel = (b: number): string => (b === 0 ? 'canary' : String(b));
const reasonText = (r: Reason | undefined): string =>
  r === undefined ? '' : `${r.code}: ${r.message}`;

const rolloutColumns: readonly PrintColumn<RolloutRow>[] = [
  { header: 'ROLLOUT', value: (r) => r.rollout },
  { header: 'POOL', value: (r) => r.pool },
  { header: 'TARGET', value: (r) => r.target },
  { header: 'STATE', value: (r) => r.state },
  { header: 'NOW', value: (r) => r.verdict },
  { header: 'PREDICTED', value: (r) => r.predicted },
  { header: 'MESSAGE', value: (r) => r.message ?? '' },
];

/** Columns of the decisions now (offline and live plans). */
export const decisionColumns = (at: string): readonly PrintColumn<DecisionRow>[] => [
  { header: 'ROLLOUT', value: (d) => d.rollout },
  { header: 'MACHINE', value: (d) => d.machine },
  { header: 'ACTION', value: (d) => (d.staged === true ? `${d.action} (staged)` : d.action) },
  { header: 'BATCH', value: (d) => batchLabel(d.batch) },
  {
    header: 'NOT BEFORE',
    value: (d) => (d.notBefore === undefined ? '' : relative(d.notBefore, at)),
  },
  { header: 'REASON', value: (d) => reasonText(d.reason) },
];

const scheduleColumns = (at: string): readonly PrintColumn<ScheduleRow>[] => [
  { header: 'ROLLOUT', value: (s) => s.rollout },
  { header: 'MACHINE', value: (s) => s.machine },
  { header: 'BATCH', value: (s) => batchLabel(s.batch) },
  { header: 'START', value: (s) => relative(s.start, at) },
  { header: 'FINISH', value: (s) => relative(s.finish, at) },
  { header: 'STARTS AT (UTC)', value: (s) => s.start },
];

const waitingColumns = (at: string): readonly PrintColumn<WaitingRow>[] => [
  { header: 'ROLLOUT', value: (w) => w.rollout },
  { header: 'MACHINE', value: (w) => w.machine },
  {
    header: 'NOT BEFORE',
    value: (w) => (w.notBefore === undefined ? '' : relative(w.notBefore, at)),
  },
  { header: 'REASON', value: (w) => reasonText(w.reason) },
];

/** The table form: rollouts, decisions now, the schedule, and who still waits at the horizon. */
export function describePlan(v: PlanView): string {
  // The instant planned at (--at), not how long ago: an offline plan may be of any time.
  const title = `plan of ${v.fleet} at ${instant(Date.parse(v.at))}\n`;
  if (v.rollouts.length === 0) return `${title}\nno rollouts: nothing to plan\n`;
  const parts = [title];
  parts.push(`\nrollouts:\n${renderTable(rolloutColumns, v.rollouts)}`);
  parts.push(`\nnow:\n${renderTable(decisionColumns(v.at), v.decisions)}`);
  const head = `\npredicted schedule (each upgrade ${v.upgradeMinutes}m, next ${v.horizon}):\n`;
  const last = `last finish ${relative(v.end, v.at)} (${v.end})\n`;
  parts.push(
    head +
      (v.schedule.length === 0
        ? 'no machine starts within the horizon\n'
        : renderTable(scheduleColumns(v.at), v.schedule) + last),
  );
  if (v.waiting.length > 0) {
    const rows = renderTable(waitingColumns(v.at), v.waiting);
    parts.push(`\nnot started within ${v.horizon}:\n${rows}`);
  }
  return parts.join('');
}
