// SPDX-License-Identifier: Apache-2.0
/**
 * Machines against time, one row each, for the rollouts that started machines. Behind each row, its
 * pool's maintenance windows are shaded (`/v1/plan` windows: when starts are allowed); a dashed line
 * marks when waiting machines may start next (the planner's `notBefore`: a window opening, a soak
 * or a rate limit ending).
 */
import type { PlanView, RolloutView } from '../protocol/operator.ts';
import { el, svg } from './dom.ts';
import { clock, phaseColour } from './format.ts';
import {
  chart,
  timeAxis,
  timelineRows,
  windowsOnAxis,
  type Stretch,
  type TimeAxis,
  type TimelineRow,
} from './timeline-layout.ts';

/** What the timeline is drawn from. */
export interface TimelineInput {
  readonly rollouts: readonly RolloutView[];
  readonly now: number;
  /** When waiting machines may start (epoch ms). */
  readonly opens: readonly number[];
  readonly windows: PlanView['windows'];
}

function rowShapes(
  row: TimelineRow,
  y: number,
  axis: TimeAxis,
  open: readonly Stretch[],
): Element[] {
  const shading = open.map((s) =>
    svg('rect', {
      x: axis.x(s.from),
      y: y - 2,
      width: Math.max(1, axis.x(s.to) - axis.x(s.from)),
      height: chart.rowHeight - 4,
      class: 'window',
      'data-window': row.rollout.pool,
    }),
  );
  const label = `${row.machine.machine} · ${row.rollout.pool} ${row.rollout.target.version} · ${row.batch}`;
  return [
    ...shading,
    svg('text', { x: 4, y: y + 14 }, label),
    svg('rect', {
      x: axis.x(row.start),
      y,
      width: Math.max(3, axis.x(row.end) - axis.x(row.start)),
      height: chart.rowHeight - 8,
      rx: 3,
      fill: phaseColour[row.machine.phase],
    }),
  ];
}

function startLine(t: number, axis: TimeAxis, rows: number): Element[] {
  return [
    svg('line', {
      x1: axis.x(t),
      x2: axis.x(t),
      y1: 0,
      y2: rows * chart.rowHeight + 4,
      stroke: 'var(--warn)',
      'stroke-dasharray': '4 3',
      'data-not-before': new Date(t).toISOString(),
    }),
    svg('text', { x: axis.x(t) + 3, y: 12, class: 'axis' }, `may start ${clock(t)}`),
  ];
}

function axisLabels(axis: TimeAxis, rows: number, shaded: boolean): Element[] {
  const y = rows * chart.rowHeight + 18;
  const legend = shaded
    ? [svg('text', { x: (chart.label + chart.width) / 2 - 60, y, class: 'axis' }, '▒ window open')]
    : [];
  return [
    ...legend,
    svg('text', { x: chart.label, y, class: 'axis' }, clock(axis.t0)),
    svg('text', { x: chart.width - 80, y, class: 'axis' }, clock(axis.t1)),
  ];
}

/** The timeline chart (`data-rows`: how many machines it shows), or a note while it is empty. */
export function timeline(input: TimelineInput): Element {
  const rows = timelineRows(input.rollouts, input.now);
  if (rows.length === 0)
    return el('p', { class: 'muted' }, 'Machines appear here as rollouts start them.');
  const axis = timeAxis(rows, input.now, input.opens);
  const windows = windowsOnAxis(input.windows, axis);
  const drawing = svg('svg', {
    viewBox: `0 0 ${chart.width} ${rows.length * chart.rowHeight + 24}`,
    'data-rows': rows.length,
  });
  rows.forEach((row, i) => {
    const open = windows.get(row.rollout.pool) ?? [];
    drawing.append(...rowShapes(row, i * chart.rowHeight + 4, axis, open));
  });
  for (const t of input.opens) drawing.append(...startLine(t, axis, rows.length));
  const shaded = rows.some((row) => windows.has(row.rollout.pool));
  drawing.append(...axisLabels(axis, rows.length, shaded));
  return drawing;
}
