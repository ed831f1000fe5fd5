// SPDX-License-Identifier: Apache-2.0
/**
 * Machines against time, one row each, for the rollouts that started machines. Behind each row, its
 * pool's maintenance windows are shaded (`/v1/plan` windows: when starts are allowed); a dashed line
 * marks when waiting machines may start next (the planner's `notBefore`: a window opening, a soak
 * or a rate limit ending). The axis has ticks at round times; a long idle stretch (a hold, a
 * closed window) is compressed into a break labelled with its length (`time-axis.ts`).
 */
import type { PlanView, RolloutView } from '../protocol/operator.ts';
import { el, svg } from './dom.ts';
import { clock, phaseColour } from './format.ts';
import { spanText, timeTicks, type Tick } from './time-axis.ts';
import {
  chart,
  rowLabel,
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
  const label = rowLabel(row);
  const text = svg('text', { x: 4, y: y + 14 }, svg('title', {}, label.title), label.text);
  const named: Element = label.link === undefined ? text : svg('a', { href: label.link }, text);
  return [
    ...shading,
    named,
    svg('rect', {
      x: axis.x(row.start),
      y,
      width: Math.max(3, axis.x(row.end) - axis.x(row.start)),
      height: chart.rowHeight - 8,
      rx: 3,
      fill: phaseColour[row.machine.phase],
      class: row.cut ? 'bar cut' : 'bar',
      'data-machine': row.machine.machine,
    }),
  ];
}

const mayStart = (t: number): string => `may start ${clock(t).slice(11)}`;

/** What the chart's marks mean, for those it shows: one line under the axis. */
function legend(o: { breaks: boolean; opens: boolean; windows: boolean }): string {
  return [
    ...(o.windows ? ['▒ window open'] : []),
    ...(o.opens ? ['┆ the next start the policies allow'] : []),
    ...(o.breaks ? ['⋯ a stretch with nothing to show, shortened (its length below it)'] : []),
    'times in UTC',
  ].join(' · '); // SVG text collapses runs of spaces
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
    // Near the right edge the label reads leftwards from the line, or the chart would clip it.
    axis.x(t) > chart.width * 0.75
      ? svg('text', { x: axis.x(t) - 3, y: 12, class: 'axis', 'text-anchor': 'end' }, mayStart(t))
      : svg('text', { x: axis.x(t) + 3, y: 12, class: 'axis' }, mayStart(t)),
  ];
}

/**
 * A tick's label: seconds only when ticks are seconds apart, the date when they are days apart or
 * the tick is a midnight (the axis spans days).
 */
function tickLabel(t: Tick): string {
  const time = clock(t.t);
  const midnight = time.endsWith('T00:00:00Z');
  // UTC, as every time molt shows: `11-29` on days, `14:30` or `14:30:15` within one.
  if (t.step >= 86_400_000 || (midnight && t.step >= 3_600_000)) return time.slice(5, 10);
  return time.slice(11, t.step < 60_000 ? 19 : 16);
}

/** Ticks, grid lines and the breaks of compressed stretches, under `rows` rows. */
function axisShapes(axis: TimeAxis, rows: number): Element[] {
  const bottom = rows * chart.rowHeight + 4;
  // Ticks on UTC hours and days, as every time molt shows is UTC.
  const ticks = timeTicks(axis, { minPx: 90, offsetMs: 0 });
  const tickShapes = ticks.flatMap((t) => [
    svg('line', { x1: t.x, x2: t.x, y1: 0, y2: bottom + 4, class: 'tick' }),
    svg(
      'text',
      {
        x: t.x,
        y: bottom + 16,
        class: 'axis',
        'text-anchor': 'middle',
        'data-tick': new Date(t.t).toISOString(),
      },
      tickLabel(t),
    ),
  ]);
  const breaks = axis.pieces
    .filter((p) => p.compressed)
    .flatMap((p) => [
      svg('rect', { x: p.x0, y: 0, width: p.x1 - p.x0, height: bottom, class: 'break' }),
      svg(
        'text',
        {
          x: (p.x0 + p.x1) / 2,
          y: bottom + 16,
          class: 'axis',
          'text-anchor': 'middle',
          'data-break': p.to - p.from,
        },
        `⋯ ${spanText(p.to - p.from)}`,
      ),
    ]);
  return [...tickShapes, ...breaks];
}

/** The timeline chart (`data-rows`: how many machines it shows), or a note while it is empty. */
export function timeline(input: TimelineInput): Element {
  const rows = timelineRows(input.rollouts, input.now);
  if (rows.length === 0)
    return el('p', { class: 'muted' }, 'Machines appear here as rollouts start them.');
  const axis = timeAxis(rows, input.now, input.opens);
  const windows = windowsOnAxis(input.windows, axis);
  const drawing = svg('svg', {
    viewBox: `0 0 ${chart.width} ${rows.length * chart.rowHeight + 40}`,
    'data-rows': rows.length,
  });
  drawing.append(...axisShapes(axis, rows.length));
  rows.forEach((row, i) => {
    const open = windows.get(row.rollout.pool) ?? [];
    drawing.append(...rowShapes(row, i * chart.rowHeight + 4, axis, open));
  });
  for (const t of input.opens) drawing.append(...startLine(t, axis, rows.length));
  const marks = {
    breaks: axis.pieces.some((p) => p.compressed),
    opens: input.opens.length > 0,
    windows: rows.some((row) => windows.has(row.rollout.pool)),
  };
  drawing.append(
    svg(
      'text',
      { x: 4, y: rows.length * chart.rowHeight + 32, class: 'axis', 'data-legend': '' },
      legend(marks),
    ),
  );
  return drawing;
}
