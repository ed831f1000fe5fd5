// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  formatDuration,
  humanDuration,
  instant,
  iso,
  MAX_DURATION_MS,
  parseDuration,
  parseTime,
  relative,
  when,
} from './time.ts';

describe('durations and instants', () => {
  it('reads back every duration it writes (whole seconds)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 * 86_400 }), (seconds) => {
        assert.equal(parseDuration(formatDuration(seconds * 1000)), seconds * 1000);
      }),
    );
  });

  it('reads the units people write, and nothing else', () => {
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration(' 2d '), 172_800_000);
    for (const bad of ['', '5', '1.5h', '30x', 'h', '1m1h'])
      assert.equal(parseDuration(bad), undefined);
  });

  it('refuses durations past MAX_DURATION_MS (100 years), whose ends are no longer dates', () => {
    // Found by time.fuzz.test.ts: `800000000d` read as 6.9e16 ms, beyond a Date's range.
    assert.equal(parseDuration('36525d'), MAX_DURATION_MS);
    assert.equal(parseDuration('36525d1s'), undefined);
    assert.equal(parseDuration('800000000d'), undefined);
    assert.equal(parseDuration(`${'9'.repeat(400)}s`), undefined);
  });

  it('shows people at most two units, and sub-second durations in ms', () => {
    assert.equal(humanDuration(90_061_000), '1d1h');
    assert.equal(humanDuration(45_000), '45s');
    assert.equal(humanDuration(250), '250ms');
  });

  it('takes instants only with a zone', () => {
    assert.equal(parseTime('2026-11-24T10:00:00Z'), Date.UTC(2026, 10, 24, 10));
    assert.equal(parseTime('2026-11-24T11:00:00+01:00'), Date.UTC(2026, 10, 24, 10));
    assert.equal(parseTime('2026-11-24T10:00:00'), undefined);
    assert.equal(iso(Date.UTC(2026, 10, 24, 10)), '2026-11-24T10:00:00.000Z');
  });
});

describe('times for people', () => {
  const t = Date.parse('2026-11-29T00:11:14.819Z');
  it('writes an instant as UTC to the second, with no milliseconds', () => {
    assert.equal(instant(t), '2026-11-29T00:11:14Z');
  });
  it('says how far it is, ahead or behind, and "now" within a second', () => {
    assert.equal(when(t, t - 5 * 60_000), '2026-11-29T00:11:14Z (in 5m)');
    assert.equal(when(t, t + 3 * 3_600_000 + 20 * 60_000), '2026-11-29T00:11:14Z (3h20m ago)');
    assert.equal(relative(t, t + 400), 'now');
  });
});
