// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OperatorMetrics, renderMetrics } from './metrics.ts';
import { PassHistogram } from './pass-histogram.ts';

const name = 'molt_operator_reconcile_pass_duration_seconds';

describe('the reconcile pass duration histogram', () => {
  it('counts each pass in its bucket, cumulatively, with +Inf, sum and count', () => {
    const h = new PassHistogram();
    for (const ms of [3, 40, 40, 700, 90_000]) h.observe(ms);
    const lines = h.lines(name);
    assert.ok(lines.includes(`${name}_bucket{le="0.005"} 1`));
    assert.ok(lines.includes(`${name}_bucket{le="0.05"} 3`));
    assert.ok(lines.includes(`${name}_bucket{le="1"} 4`));
    assert.ok(lines.includes(`${name}_bucket{le="60"} 4`), 'a 90 s pass is only in +Inf');
    assert.ok(lines.includes(`${name}_bucket{le="+Inf"} 5`));
    assert.ok(lines.includes(`${name}_count 5`));
    assert.equal(
      lines.find((l) => l.startsWith(`${name}_sum`)),
      `${name}_sum 90.783`,
    );
  });

  it('is served on /metrics with every pass the loop reported, failed ones too', () => {
    const metrics = new OperatorMetrics();
    metrics.recordPass({ startedAt: 0, durationMs: 20, ok: true });
    metrics.recordPass({ startedAt: 1, durationMs: 3_000, ok: false });
    const text = renderMetrics({
      state: { machines: [], rollouts: [], starts: [], holds: {}, blocks: [] },
      metrics,
      pools: [],
      leader: true,
      now: 0,
    });
    assert.match(text, new RegExp(`^# TYPE ${name} histogram$`, 'm'));
    assert.match(text, new RegExp(`^${name}_bucket\\{le="0.025"\\} 1$`, 'm'));
    assert.match(text, new RegExp(`^${name}_bucket\\{le="5"\\} 2$`, 'm'));
    assert.match(text, new RegExp(`^${name}_count 2$`, 'm'));
  });
});
