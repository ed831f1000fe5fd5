// SPDX-License-Identifier: Apache-2.0
// Window evaluation: the [fire, fire + duration) boundary, zones and DST (croner's behaviour,
// pinned here so an upgrade of croner that changes it fails loudly), exclusions and openings.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { oracleAllowed } from './arbitraries.test.ts';
import type { Window } from './types.ts';
import {
  allowedAt,
  cronOf,
  describeInstant,
  isAllowed,
  isWindowOpen,
  nextFire,
  nextOpening,
  windowCloses,
} from './windows.ts';

const at = (iso: string): number => Date.parse(iso);
const MIN = 60_000;
const HOUR = 60 * MIN;

describe('windows', () => {
  it('is open on [fire, fire + duration)', () => {
    const w: Window = { cron: '0 2 * * *', durationMs: HOUR };
    assert.equal(isWindowOpen(w, at('2026-11-24T01:59:59.999Z')), false);
    assert.equal(isWindowOpen(w, at('2026-11-24T02:00:00.000Z')), true);
    assert.equal(isWindowOpen(w, at('2026-11-24T02:59:59.999Z')), true);
    assert.equal(isWindowOpen(w, at('2026-11-24T03:00:00.000Z')), false);
  });

  it('reads the cron in the window time zone', () => {
    const w: Window = { cron: '0 2 * * *', durationMs: HOUR, timeZone: 'America/New_York' };
    assert.equal(isWindowOpen(w, at('2026-11-24T07:30:00.000Z')), true);
    assert.equal(isWindowOpen(w, at('2026-11-24T02:30:00.000Z')), false);
  });

  it('moves a fire inside the spring-forward gap to the first valid instant (croner, Europe/Berlin)', () => {
    const w: Window = { cron: '0 2 * * *', durationMs: HOUR, timeZone: 'Europe/Berlin' };
    // 28 March: 02:00 CET; 29 March: 02:00 does not exist, croner fires at 03:00 CEST; 30 March: 02:00 CEST.
    assert.equal(nextFire(w, at('2026-03-28T00:00:00Z')), at('2026-03-28T01:00:00Z'));
    assert.equal(nextFire(w, at('2026-03-28T12:00:00Z')), at('2026-03-29T01:00:00Z'));
    assert.equal(nextFire(w, at('2026-03-29T12:00:00Z')), at('2026-03-30T00:00:00Z'));
    assert.equal(isWindowOpen(w, at('2026-03-29T01:59:59.999Z')), true);
    assert.equal(isWindowOpen(w, at('2026-03-29T02:00:00Z')), false);
  });

  it('fires once in the repeated autumn hour, at its first occurrence (croner, Europe/Berlin)', () => {
    const w: Window = { cron: '30 2 * * *', durationMs: 30 * MIN, timeZone: 'Europe/Berlin' };
    // 25 October: 02:30 happens at 00:30Z (CEST) and again at 01:30Z (CET); croner fires at the first.
    assert.equal(nextFire(w, at('2026-10-24T12:00:00Z')), at('2026-10-25T00:30:00Z'));
    assert.equal(nextFire(w, at('2026-10-25T00:30:00Z')), at('2026-10-26T01:30:00Z'));
    assert.equal(isWindowOpen(w, at('2026-10-25T00:45:00Z')), true);
    assert.equal(isWindowOpen(w, at('2026-10-25T01:45:00Z')), false);
  });

  it('closes while an exclusion is open and finds the next opening after it', () => {
    const policy = {
      windows: [{ cron: '0 * * * *', durationMs: 30 * MIN }],
      exclusions: [{ cron: '0 2 * * *', durationMs: 2 * HOUR }],
    };
    assert.equal(isAllowed(policy, at('2026-11-24T01:10:00Z')), true);
    assert.equal(isAllowed(policy, at('2026-11-24T02:10:00Z')), false);
    assert.equal(nextOpening(policy, at('2026-11-24T02:10:00Z'))?.at, at('2026-11-24T04:00:00Z'));
    assert.equal(nextOpening(policy, at('2026-11-24T01:10:00Z'))?.at, at('2026-11-24T01:10:00Z'));
  });

  it('joins overlapping occurrences when computing when a window closes', () => {
    const w: Window = { cron: '*/15 * * * *', durationMs: 20 * MIN };
    const t = at('2026-11-24T02:05:00Z');
    assert.equal(windowCloses(w, t, t + HOUR) > t + HOUR, true);
    assert.equal(
      windowCloses({ cron: '0 * * * *', durationMs: 10 * MIN }, t),
      at('2026-11-24T02:10:00Z'),
    );
  });

  it('gives up quietly on a policy that never opens, and quickly', () => {
    const daily: Window = { cron: '0 2 * * *', durationMs: HOUR };
    const policy = { windows: [daily], exclusions: [{ cron: '0 1 * * *', durationMs: 3 * HOUR }] };
    const start = performance.now();
    assert.equal(nextOpening(policy, at('2026-11-24T00:00:00Z')), undefined);
    assert.equal(nextOpening(policy, at('2026-11-24T06:00:00Z')), undefined);
    assert.ok(performance.now() - start < 2_000);
    assert.equal(
      nextOpening(
        { windows: [{ cron: '0 0 1 1 *', durationMs: HOUR }] },
        at('2026-11-24T00:00:00Z'),
        30 * 24 * HOUR,
      ),
      undefined,
    );
  });

  it('compiles each window once', () => {
    const w: Window = { cron: '0 2 * * *', durationMs: HOUR };
    assert.equal(cronOf(w), cronOf(w));
  });

  it('shows an instant in UTC and in the window zone', () => {
    assert.equal(
      describeInstant(at('2026-11-24T01:00:00Z'), 'Europe/Berlin'),
      '2026-11-24T01:00:00Z (Europe/Berlin 02:00)',
    );
    assert.equal(describeInstant(at('2026-11-24T01:00:00Z'), undefined), '2026-11-24T01:00:00Z');
  });
});

describe('windows (properties)', () => {
  const windowArb = fc.record({
    cron: fc.constantFrom('0 * * * *', '*/20 * * * *', '0 2 * * *', '30 1 * * 1-5', '0 */6 * * *'),
    durationMs: fc.constantFrom(5 * MIN, 30 * MIN, 3 * HOUR),
    timeZone: fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kolkata'),
  });
  const policyArb = fc.record({
    windows: fc.array(windowArb, { minLength: 1, maxLength: 2 }),
    exclusions: fc.array(windowArb, { maxLength: 1 }),
  });
  const timeArb = fc.integer({ min: at('2026-03-27T00:00:00Z'), max: at('2026-04-02T00:00:00Z') });

  it('agrees with the previous-fire oracle, and nextOpening finds the first allowed minute', () => {
    fc.assert(
      fc.property(policyArb, timeArb, (policy, t0) => {
        const t = t0 - (t0 % MIN);
        assert.equal(allowedAt(policy, t), oracleAllowed({ kind: 'window', ...policy }, t));
        const o = nextOpening(policy, t, 3 * 24 * HOUR);
        if (o === undefined) return;
        assert.ok(
          o.at >= t && oracleAllowed({ kind: 'window', ...policy }, o.at),
          'not open at the opening',
        );
        for (let m = t; m < o.at && m < t + 12 * HOUR; m += 5 * MIN) {
          assert.ok(
            !oracleAllowed({ kind: 'window', ...policy }, m),
            `open earlier at ${new Date(m).toISOString()}`,
          );
        }
        assert.equal(allowedAt(policy, t), o.at === t);
      }),
      { numRuns: 150 },
    );
  });
});
