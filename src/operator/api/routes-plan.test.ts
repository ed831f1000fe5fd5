// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Policy } from '../../core/rollout/types.ts';
import { poolWindows } from './routes-plan.ts';

const HOUR = 3_600_000;
const nightly: Policy = { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: 4 * HOUR }] };
const notAtThree: Policy = {
  kind: 'window',
  windows: [{ cron: '0 0 * * *', durationMs: 3 * HOUR }],
};

describe('GET /v1/plan windows', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');

  it('gives pools with windows their allowed stretches a day either side, fleet-wide windows included', () => {
    const w = poolWindows(
      {
        pools: [
          { name: 'a', channel: 'stable', policies: [nightly] },
          {
            name: 'b',
            channel: 'stable',
            policies: [{ kind: 'concurrency', limit: { count: 1 } }],
          },
        ],
        fleetPolicies: [],
      },
      now,
    );
    assert.deepEqual(w, [
      {
        pool: 'a',
        open: [
          { from: '2026-11-24T02:00:00.000Z', to: '2026-11-24T06:00:00.000Z' },
          { from: '2026-11-25T02:00:00.000Z', to: '2026-11-25T06:00:00.000Z' },
        ],
      },
    ]);
  });

  it('shades only where the pool’s and the fleet’s windows both allow a start', () => {
    const w = poolWindows(
      {
        pools: [{ name: 'a', channel: 'stable', policies: [nightly] }],
        fleetPolicies: [notAtThree],
      },
      now,
    );
    assert.deepEqual(w[0]?.open, [
      { from: '2026-11-24T02:00:00.000Z', to: '2026-11-24T03:00:00.000Z' },
      { from: '2026-11-25T02:00:00.000Z', to: '2026-11-25T03:00:00.000Z' },
    ]);
  });
});
