// SPDX-License-Identifier: Apache-2.0
// The timeline's axis: ticks at round times a readable distance apart, and a long idle stretch
// (a hold) compressed into a break so the bars around it keep their width.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compressedAxis, gapPx, spanText, tickSteps, timeTicks } from './time-axis.ts';

const at = (hhmm: string): number => Date.parse(`2026-11-24T${hhmm}:00.000Z`);
const minute = 60_000;
const hour = 60 * minute;

describe('the time axis', () => {
  it('is linear from end to end when nothing is idle for long', () => {
    const axis = compressedAxis({
      t0: at('10:00'),
      t1: at('11:00'),
      x0: 100,
      x1: 700,
      busy: [{ from: at('10:00'), to: at('11:00') }],
    });
    assert.equal(axis.pieces.length, 1);
    assert.deepEqual(
      [axis.x(at('10:00')), axis.x(at('10:30')), axis.x(at('11:00'))],
      [100, 400, 700],
    );
    assert.equal(axis.x(at('09:00')), 100, 'before the axis: its start');
    assert.equal(axis.x(at('12:00')), 700, 'after the axis: its end');
  });

  it('compresses a six-hour hold between two ten-minute upgrades into one break', () => {
    const busy = [
      { from: at('10:00'), to: at('10:10') },
      { from: at('16:00'), to: at('16:10') },
    ];
    const axis = compressedAxis({ t0: at('10:00'), t1: at('16:10'), x0: 0, x1: 600, busy });
    const breaks = axis.pieces.filter((p) => p.compressed);
    assert.equal(breaks.length, 1);
    assert.equal(breaks[0]!.x1 - breaks[0]!.x0, gapPx);
    assert.ok(breaks[0]!.to - breaks[0]!.from > 5 * hour);
    // Each upgrade gets a third of the width or more, not 1/37 of it as on a linear axis.
    const width = axis.x(at('10:10')) - axis.x(at('10:00'));
    assert.ok(width > 180, `an upgrade is ${String(width)} wide`);
    assert.equal(axis.x(at('16:10')), 600);
    // Monotonic across the break.
    const xs = [at('10:00'), at('10:10'), at('13:00'), at('16:00'), at('16:10')].map((t) =>
      axis.x(t),
    );
    assert.deepEqual(
      xs,
      [...xs].sort((a, b) => a - b),
    );
  });

  it('never compresses a pause under a minute: a soak or a reboot is part of the story', () => {
    const busy = [
      { from: at('10:00'), to: at('10:00') + 3000 },
      { from: at('10:00') + 50_000, to: at('10:00') + 53_000 },
    ];
    const axis = compressedAxis({
      t0: at('10:00'),
      t1: at('10:00') + 53_000,
      x0: 0,
      x1: 530,
      busy,
    });
    assert.equal(axis.pieces.filter((p) => p.compressed).length, 0);
    assert.equal(axis.x(at('10:00') + 26_500), 265);
  });

  it('keeps tick labels off a break’s label', () => {
    const busy = [
      { from: at('10:00'), to: at('10:10') },
      { from: at('16:00'), to: at('16:10') },
    ];
    const axis = compressedAxis({ t0: at('10:00'), t1: at('16:10'), x0: 0, x1: 600, busy });
    const gap = axis.pieces.find((p) => p.compressed)!;
    for (const t of timeTicks(axis, { minPx: 70 }))
      assert.ok(Math.abs(t.x - (gap.x0 + gap.x1) / 2) >= 52, `a tick at ${String(t.x)}`);
  });

  it('puts ticks on round minutes, at least minPx apart, on the smallest step that allows it', () => {
    const axis = compressedAxis({
      t0: at('10:03') + 20_000,
      t1: at('10:33'),
      x0: 0,
      x1: 600,
      busy: [{ from: at('10:03'), to: at('10:33') }],
    });
    const ticks = timeTicks(axis, { minPx: 70 });
    assert.equal(ticks[0]!.step, 5 * minute, '20 px a minute: 5 minutes apart');
    assert.deepEqual(
      ticks.map((t) => new Date(t.t).toISOString().slice(11, 16)),
      ['10:05', '10:10', '10:15', '10:20', '10:25', '10:30'],
    );
    for (const [a, b] of ticks.slice(1).map((t, i) => [ticks[i]!, t] as const))
      assert.ok(b.x - a.x >= 70);
  });

  it('aligns hour ticks to the viewer’s clock, and leaves compressed stretches without ticks', () => {
    const busy = [
      { from: at('08:00'), to: at('12:00') },
      { from: at('20:00'), to: at('23:00') },
    ];
    const axis = compressedAxis({ t0: at('08:00'), t1: at('23:00'), x0: 0, x1: 700, busy });
    const halfHour = 30 * minute;
    const ticks = timeTicks(axis, { minPx: 70, offsetMs: halfHour });
    assert.ok(ticks.length >= 4);
    for (const t of ticks) {
      assert.equal((t.t + halfHour) % t.step, 0, 'round in local time');
      const piece = axis.pieces.find((p) => t.t >= p.from && t.t <= p.to);
      assert.equal(piece?.compressed, false, new Date(t.t).toISOString());
    }
  });

  it('steps through seconds, minutes, hours and days', () => {
    assert.deepEqual(
      [tickSteps[0], tickSteps.includes(15 * minute), tickSteps.at(-1)],
      [1000, true, 7 * 24 * hour],
    );
  });

  it('says how long a break is the way people say it', () => {
    assert.deepEqual(
      [
        spanText(45_000),
        spanText(200_000),
        spanText(5 * hour + 55 * minute + 7000),
        spanText(52 * hour),
      ],
      ['45s', '3m 20s', '5h 55m', '2d 4h'],
    );
  });
});
