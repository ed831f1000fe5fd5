// SPDX-License-Identifier: Apache-2.0
/**
 * The timeline's time axis as plain values (no DOM): where an instant falls, with idle stretches
 * compressed and ticks at sensible steps. A rollout held for hours (a person's hold, a closed
 * window, a long soak) would otherwise squeeze every bar into a sliver at either end: any stretch
 * with nothing on it longer than {@link compressShare} of the whole is drawn {@link gapPx} wide,
 * marked as a break with its length, and the rest of the width goes to the time that has bars.
 */

/** A stretch of time in epoch milliseconds. */
export interface Stretch {
  readonly from: number;
  readonly to: number;
}

/** One piece of the axis: linear from `x0` to `x1`; a compressed one is a break. */
export interface AxisPiece extends Stretch {
  readonly x0: number;
  readonly x1: number;
  readonly compressed: boolean;
}

/** The time axis: its first and last instant, its pieces, and where an instant falls (SVG x). */
export interface TimeAxis {
  readonly t0: number;
  readonly t1: number;
  readonly pieces: readonly AxisPiece[];
  /** SVG units per millisecond on the pieces that are not compressed. */
  readonly scale: number;
  x(t: number): number;
}

/** Idle stretches longer than this share of the axis, and than {@link compressMinMs}, are compressed. */
export const compressShare = 0.2;
/** A pause shorter than this is part of the story (a soak, a reboot), never a break. */
export const compressMinMs = 60_000;
/** How wide a compressed stretch is drawn. */
export const gapPx = 36;

/** The busy stretches merged, each widened by `pad` on both sides. */
function merged(busy: readonly Stretch[], pad: number): Stretch[] {
  const sorted = busy
    .map((b) => ({ from: b.from - pad, to: b.to + pad }))
    .sort((a, b) => a.from - b.from);
  const out: Stretch[] = [];
  for (const b of sorted) {
    const last = out.at(-1);
    if (last !== undefined && b.from <= last.to)
      out[out.length - 1] = { from: last.from, to: Math.max(last.to, b.to) };
    else out.push(b);
  }
  return out;
}

/** The idle stretches between `t0` and `t1` long enough to compress. */
function idleGaps(busy: readonly Stretch[], t0: number, t1: number): Stretch[] {
  const span = t1 - t0;
  const long = Math.max(span * compressShare, compressMinMs);
  const gaps: Stretch[] = [];
  let at = t0;
  for (const b of merged(busy, span * 0.01)) {
    if (b.from - at > long) gaps.push({ from: at, to: b.from });
    at = Math.max(at, b.to);
  }
  if (t1 - at > long) gaps.push({ from: at, to: t1 });
  return gaps;
}

/**
 * The axis from `t0` to `t1` drawn from `x0` to `x1`, with the idle stretches between the `busy`
 * ones compressed. An instant outside the axis falls on its nearer end.
 */
export function compressedAxis(o: {
  readonly t0: number;
  readonly t1: number;
  readonly x0: number;
  readonly x1: number;
  readonly busy: readonly Stretch[];
}): TimeAxis {
  const t1 = Math.max(o.t1, o.t0 + 1);
  const gaps = idleGaps(o.busy, o.t0, t1);
  const idle = gaps.reduce((sum, g) => sum + (g.to - g.from), 0);
  const scale = (o.x1 - o.x0 - gaps.length * gapPx) / Math.max(1, t1 - o.t0 - idle);
  const pieces: AxisPiece[] = [];
  let [t, x] = [o.t0, o.x0];
  const add = (to: number, compressed: boolean): void => {
    const width = compressed ? gapPx : (to - t) * scale;
    if (to > t) pieces.push({ from: t, to, x0: x, x1: x + width, compressed });
    [t, x] = [to, x + width];
  };
  for (const g of gaps) {
    add(g.from, false);
    add(g.to, true);
  }
  add(t1, false);
  const at = (time: number): number => {
    if (time >= t1) return o.x1;
    const p = pieces.find((q) => time <= q.to) ?? pieces.at(-1);
    if (p === undefined || time <= p.from) return p?.x0 ?? o.x0;
    return p.x0 + ((Math.min(time, p.to) - p.from) / (p.to - p.from)) * (p.x1 - p.x0);
  };
  return { t0: o.t0, t1, pieces, scale, x: at };
}

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;

/** The steps ticks may be apart: round numbers of seconds, minutes, hours and days. */
export const tickSteps: readonly number[] = [
  ...[1, 2, 5, 10, 15, 30].map((n) => n * second),
  ...[1, 2, 5, 10, 15, 30].map((n) => n * minute),
  ...[1, 2, 3, 6, 12].map((n) => n * hour),
  ...[1, 2, 7].map((n) => n * day),
];

/** One tick: its instant, where it falls, and the step it was chosen at (how to label it). */
export interface Tick {
  readonly t: number;
  readonly x: number;
  readonly step: number;
}

/**
 * Ticks at the smallest step that leaves `minPx` between them, on round instants of the viewer's
 * clock (`offsetMs`: the local time's offset from UTC, so hours fall on the hour there); none
 * inside or next to a compressed stretch (its label is there), and none closer than `minPx` to
 * the one before.
 */
export function timeTicks(
  axis: TimeAxis,
  o: { readonly minPx: number; readonly offsetMs?: number },
): Tick[] {
  const offset = o.offsetMs ?? 0;
  const step = tickSteps.find((s) => s * axis.scale >= o.minPx) ?? tickSteps.at(-1) ?? day;
  const ticks: Tick[] = [];
  const breaks = axis.pieces.filter((q) => q.compressed);
  for (const p of axis.pieces.filter((q) => !q.compressed)) {
    for (let t = Math.ceil((p.from + offset) / step) * step - offset; t <= p.to; t += step) {
      const x = axis.x(t);
      const previous = ticks.at(-1);
      const nearBreak = breaks.some((b) => Math.abs(x - (b.x0 + b.x1) / 2) < o.minPx * 0.75);
      if (!nearBreak && (previous === undefined || x - previous.x >= o.minPx))
        ticks.push({ t, x, step });
    }
  }
  return ticks;
}

/** A length of time as people read it: `45s`, `3m 20s`, `5h 55m`, `2d 4h`. */
export function spanText(ms: number): string {
  const parts: [number, string][] = [
    [Math.floor(ms / day), 'd'],
    [Math.floor((ms % day) / hour), 'h'],
    [Math.floor((ms % hour) / minute), 'm'],
    [Math.floor((ms % minute) / second), 's'],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  if (first < 0) return '0s';
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n}${unit}`)
    .join(' ');
}
