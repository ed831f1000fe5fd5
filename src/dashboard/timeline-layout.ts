// SPDX-License-Identifier: Apache-2.0
/**
 * The timeline's geometry as plain values (no DOM): which machines get a row, in what order, and
 * where an instant falls on the chart. `timeline.ts` draws it.
 */
import type { MachineProgressView, PlanView, RolloutView } from '../protocol/operator.ts';
import { batchLabel } from './format.ts';

/** One machine a rollout started: a bar from its start to its end (now while it runs). */
export interface TimelineRow {
  readonly rollout: RolloutView;
  readonly machine: MachineProgressView;
  /** `canary` or `batch N`. */
  readonly batch: string;
  readonly start: number;
  readonly end: number;
}

/** The machines the rollouts started, earliest start first. */
export function timelineRows(rollouts: readonly RolloutView[], now: number): TimelineRow[] {
  const rows: TimelineRow[] = [];
  for (const rollout of rollouts) {
    for (const machine of rollout.machines) {
      if (machine.startedAt === undefined) continue;
      rows.push({
        rollout,
        machine,
        batch: batchLabel(machine.decision),
        start: Date.parse(machine.startedAt),
        end: machine.finishedAt === undefined ? now : Date.parse(machine.finishedAt),
      });
    }
  }
  return rows.sort((a, b) => a.start - b.start);
}

/** The chart's size in SVG units: the labels take the left, bars the rest. */
export const chart = { width: 1000, label: 260, rowHeight: 22 } as const;

/** The time axis: its first and last instant and where an instant falls (SVG x). */
export interface TimeAxis {
  readonly t0: number;
  readonly t1: number;
  x(t: number): number;
}

/**
 * The axis from the first start to the latest of now, every bar's end and every `notBefore`
 * (`opens`), so a waiting machine's next chance is on the chart. `rows` must not be empty.
 */
export function timeAxis(
  rows: readonly TimelineRow[],
  now: number,
  opens: readonly number[],
): TimeAxis {
  const t0 = Math.min(...rows.map((r) => r.start));
  const t1 = Math.max(now, ...rows.map((r) => r.end), ...opens);
  const span = chart.width - chart.label - 10;
  return { t0, t1, x: (t) => chart.label + (span * (t - t0)) / Math.max(1, t1 - t0) };
}

/** A stretch of time in epoch milliseconds. */
export interface Stretch {
  readonly from: number;
  readonly to: number;
}

/** Each pool's open windows (`/v1/plan` windows), cut to the axis; stretches outside it dropped. */
export function windowsOnAxis(
  windows: PlanView['windows'],
  axis: Pick<TimeAxis, 't0' | 't1'>,
): ReadonlyMap<string, readonly Stretch[]> {
  const byPool = new Map<string, readonly Stretch[]>();
  for (const w of windows) {
    const open = w.open
      .map((o) => ({
        from: Math.max(axis.t0, Date.parse(o.from)),
        to: Math.min(axis.t1, Date.parse(o.to)),
      }))
      .filter((s) => s.from < s.to);
    byPool.set(w.pool, open);
  }
  return byPool;
}

/** The distinct instants waiting machines may start at (the planner's `notBefore`s). */
export function startInstants(plan: Pick<PlanView, 'decisions'>): number[] {
  const instants = plan.decisions.flatMap((d) =>
    d.notBefore === undefined ? [] : [Date.parse(d.notBefore)],
  );
  return [...new Set(instants)];
}
