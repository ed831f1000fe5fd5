// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): durations and instants as people write them, and
// maintenance windows (cron, duration, zone) as a fleet file or the store carries them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fuzzParameters, fuzzText, outcome } from '../testkit/fuzz.ts';
import { validatePolicies } from './rollout/validate.ts';
import { isAllowed, nextOpening } from './rollout/windows.ts';
import type { Policy } from './rollout/types.ts';
import { formatDuration, parseDuration, parseTime } from './time.ts';

const durations = ['90s', '30m', '2h', '1d', '1h30m', ' 5m ', '0s'];
const times = ['2026-11-23T10:00:00Z', '2026-11-23T10:00:00.123+01:00', '2026-02-29T00:00Z'];
const crons = ['0 2 * * *', '*/15 * * * *', '0 0 29 2 *', '0 0 31 4 *', '0 2 * * 1-5', '@daily'];
const zones = ['UTC', 'Europe/Berlin', 'America/St_Johns', 'Asia/Kathmandu'];

describe('fuzz: durations, times and windows', () => {
  it('parseDuration returns undefined or whole seconds that format back to the same duration', () => {
    fc.assert(
      fc.property(
        fc.oneof(fuzzText(durations, 60), fc.stringMatching(/^(\d{1,24}[dhms]){1,4}$/)),
        (text) => {
          const r = outcome(() => parseDuration(text));
          assert.ok(r.ok, 'parseDuration reports undefined, never throws');
          if (r.value === undefined) return;
          assert.ok(Number.isSafeInteger(r.value) && r.value >= 0, `${text} → ${r.value}`);
          assert.equal(parseDuration(formatDuration(r.value)), r.value);
        },
      ),
      fuzzParameters(2_000),
    );
  });

  it('parseTime returns undefined or an instant that reads back the same', () => {
    fc.assert(
      fc.property(fuzzText(times, 60), (text) => {
        const r = outcome(() => parseTime(text));
        assert.ok(r.ok, 'parseTime reports undefined, never throws');
        if (r.value === undefined) return;
        assert.ok(Number.isFinite(r.value));
        assert.equal(parseTime(new Date(r.value).toISOString()), r.value);
      }),
      fuzzParameters(2_000),
    );
  });

  it('a window policy is refused with MOLT_POLICY_INVALID or answers every question', () => {
    const window = fc.record(
      {
        cron: fuzzText(crons, 40),
        durationMs: fc.oneof(
          fc.integer(),
          fc.constantFrom(3_600_000, 0, -1, NaN, Infinity, 1.5, 800_000_000 * 86_400_000),
        ),
        timeZone: fuzzText(zones, 30),
      },
      { requiredKeys: ['cron', 'durationMs'] },
    );
    const at = fc.integer({ min: 0, max: 4_102_444_800_000 });
    fc.assert(
      fc.property(
        fc.array(window, { maxLength: 2 }),
        fc.array(window, { maxLength: 1 }),
        at,
        (windows, exclusions, t) => {
          const policy: Policy = { kind: 'window', windows, exclusions };
          const valid = outcome(() => {
            validatePolicies([], [policy], []);
          }, 'validatePolicies');
          if (!valid.ok) {
            assert.equal(valid.error.code, 'MOLT_POLICY_INVALID');
            return;
          }
          const open = outcome(() => isAllowed(policy, t), 'isAllowed');
          assert.ok(open.ok);
          const next = outcome(() => nextOpening(policy, t, 3 * 86_400_000), 'nextOpening');
          assert.ok(next.ok);
          if (next.value !== undefined) assert.ok(next.value.at >= t);
        },
      ),
      fuzzParameters(300),
    );
  });
});
