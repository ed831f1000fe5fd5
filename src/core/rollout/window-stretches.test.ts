// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { oracleAllowed } from './arbitraries.test.ts';
import { allowedStretches, intersect, windowStretches } from './window-stretches.ts';

const at = (iso: string): number => Date.parse(iso);
const MIN = 60_000;
const HOUR = 60 * MIN;
const iso = (s: { from: number; to: number }): [string, string] => [
  new Date(s.from).toISOString(),
  new Date(s.to).toISOString(),
];

describe('window stretches', () => {
  it('lists each nightly window, cut at the span’s ends', () => {
    const policy = { windows: [{ cron: '0 2 * * *', durationMs: 4 * HOUR }] };
    const s = allowedStretches(policy, at('2026-11-23T03:00:00Z'), at('2026-11-25T04:00:00Z'));
    assert.deepEqual(s.map(iso), [
      ['2026-11-23T03:00:00.000Z', '2026-11-23T06:00:00.000Z'],
      ['2026-11-24T02:00:00.000Z', '2026-11-24T06:00:00.000Z'],
      ['2026-11-25T02:00:00.000Z', '2026-11-25T04:00:00.000Z'],
    ]);
  });

  it('leaves out exclusions, and merges overlapping windows', () => {
    const policy = {
      windows: [
        { cron: '0 2 * * *', durationMs: 2 * HOUR },
        { cron: '0 3 * * *', durationMs: 2 * HOUR },
      ],
      exclusions: [{ cron: '30 2 * * *', durationMs: 30 * MIN }],
    };
    const s = allowedStretches(policy, at('2026-11-24T00:00:00Z'), at('2026-11-24T12:00:00Z'));
    assert.deepEqual(s.map(iso), [
      ['2026-11-24T02:00:00.000Z', '2026-11-24T02:30:00.000Z'],
      ['2026-11-24T03:00:00.000Z', '2026-11-24T05:00:00.000Z'],
    ]);
  });

  it('needs every window policy to allow a start', () => {
    const a = [
      { from: 0, to: 10 },
      { from: 20, to: 30 },
    ];
    const b = [{ from: 5, to: 25 }];
    assert.deepEqual(intersect(a, b), [
      { from: 5, to: 10 },
      { from: 20, to: 25 },
    ]);
    assert.equal(windowStretches([], 0, 10), undefined, 'no window policy: nothing to draw');
  });

  it('covers exactly the minutes the policy allows (against the previous-fire oracle)', () => {
    const windowArb = fc.record({
      cron: fc.constantFrom('0 * * * *', '*/20 * * * *', '0 2 * * *', '30 1 * * 1-5'),
      durationMs: fc.constantFrom(5 * MIN, 30 * MIN, 3 * HOUR),
      timeZone: fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kolkata'),
    });
    const policyArb = fc.record({
      windows: fc.array(windowArb, { minLength: 1, maxLength: 2 }),
      exclusions: fc.array(windowArb, { maxLength: 1 }),
    });
    const timeArb = fc.integer({
      min: at('2026-03-27T00:00:00Z'),
      max: at('2026-04-01T00:00:00Z'),
    });
    fc.assert(
      fc.property(policyArb, timeArb, (policy, t0) => {
        const from = t0 - (t0 % MIN);
        const to = from + 12 * HOUR;
        const stretches = allowedStretches(policy, from, to);
        for (let m = from; m < to; m += 5 * MIN) {
          const inside = stretches.some((s) => s.from <= m && m < s.to);
          assert.equal(
            inside,
            oracleAllowed({ kind: 'window', ...policy }, m),
            new Date(m).toISOString(),
          );
        }
      }),
      { numRuns: 60 },
    );
  });
});
