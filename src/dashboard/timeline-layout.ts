// SPDX-License-Identifier: Apache-2.0
/**
 * The timeline's geometry as plain values (no DOM): which machines get a row, in what order, and
 * where an instant falls on the chart (`time-axis.ts`). `timeline.ts` draws it.
 */
import { isEnded } from '../core/rollout/vocabulary.ts';
import type { MachineProgressView, PlanView, RolloutView } from '../protocol/operator.ts';
import { batchLabel } from './format.ts';
import { compressedAxis, type Stretch, type TimeAxis } from './time-axis.ts';

export type { Stretch, TimeAxis } from './time-axis.ts';

/** One machine a rollout started: a bar from its start to its end (now while it runs). */
export interface TimelineRow {
  readonly rollout: RolloutView;
  readonly machine: MachineProgressView;
  /** `canary` or `batch N`. */
  readonly batch: string;
  readonly start: number;
  readonly end: number;
  /**
   * The machine never finished in this rollout and the rollout is over (cancelled, superseded):
   * nothing will end its bar, so it ends at the rollout's last known activity, drawn as such.
   */
  readonly cut: boolean;
}

/** The latest instant a rollout's machines started or finished at (its last known activity). */
function lastActivity(r: RolloutView): number {
  const times = r.machines.flatMap((m) =>
    [m.startedAt, m.finishedAt].flatMap((t) => (t === undefined ? [] : [Date.parse(t)])),
  );
  return Math.max(Date.parse(r.createdAt), ...times);
}

function row(rollout: RolloutView, machine: MachineProgressView, now: number): TimelineRow {
  const start = Date.parse(machine.startedAt ?? rollout.createdAt);
  const cut = machine.finishedAt === undefined && isEnded(rollout.state);
  const end =
    machine.finishedAt !== undefined
      ? Date.parse(machine.finishedAt)
      : cut
        ? Math.max(start, lastActivity(rollout))
        : now;
  return { rollout, machine, batch: batchLabel(machine.decision), start, end, cut };
}

/** The machines the rollouts started, earliest start first. */
export function timelineRows(rollouts: readonly RolloutView[], now: number): TimelineRow[] {
  const rows: TimelineRow[] = [];
  for (const rollout of rollouts)
    for (const machine of rollout.machines)
      if (machine.startedAt !== undefined) rows.push(row(rollout, machine, now));
  return rows.sort((a, b) => a.start - b.start);
}

/** The longest row label drawn (in characters): the labels' column is {@link chart}`.label` wide. */
export const LABEL_CHARS = 40;

/**
 * A row's words: the machine, its pool and release, and its wave when known; an image rollout's
 * row the workload and its tag (the pool repeats it). `title` is the whole text (hovered) when
 * `text` is cut to fit the labels' column; `link` the machine's page (a workload has none).
 */
export function rowLabel(row: TimelineRow): {
  readonly text: string;
  readonly title: string;
  readonly link?: string;
} {
  const r = row.rollout;
  const wave = row.machine.decision?.batch === undefined ? [] : [row.batch];
  const parts =
    r.images === undefined
      ? [row.machine.machine, `${r.pool} ${r.target.version}`, ...wave]
      : [row.machine.machine, r.target.version, ...wave];
  const title = parts.join(' · ');
  const text = title.length <= LABEL_CHARS ? title : `${title.slice(0, LABEL_CHARS - 1)}…`;
  return r.images === undefined
    ? { text, title, link: `#/machine/${encodeURIComponent(row.machine.machine)}` }
    : { text, title };
}

/** The chart's size in SVG units: the labels take the left, bars the rest. */
export const chart = { width: 1000, label: 260, rowHeight: 22 } as const;

/**
 * The axis from the first start to the latest of now, every bar's end and every `notBefore`
 * (`opens`), so a waiting machine's next chance is on the chart; long idle stretches between them
 * compressed (`time-axis.ts`). `rows` must not be empty.
 */
export function timeAxis(
  rows: readonly TimelineRow[],
  now: number,
  opens: readonly number[],
): TimeAxis {
  const t0 = Math.min(...rows.map((r) => r.start));
  const t1 = Math.max(now, ...rows.map((r) => r.end), ...opens);
  const busy: Stretch[] = [
    ...rows.map((r) => ({ from: r.start, to: r.end })),
    ...[now, ...opens].map((t) => ({ from: t, to: t })),
  ];
  return compressedAxis({ t0, t1, x0: chart.label, x1: chart.width - 10, busy });
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

/**
 * The distinct instants waiting machines may start at (the planner's `notBefore`s), of the
 * rollouts given (`live`: ids of rollouts not over; none given: all) — a superseded or cancelled
 * rollout's machines wait for nothing.
 */
export function startInstants(
  plan: Pick<PlanView, 'decisions'>,
  live?: ReadonlySet<string>,
): number[] {
  const instants = plan.decisions.flatMap((d) =>
    d.notBefore === undefined || (live !== undefined && !live.has(d.rollout))
      ? []
      : [Date.parse(d.notBefore)],
  );
  return [...new Set(instants)];
}
