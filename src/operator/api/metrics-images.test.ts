// SPDX-License-Identifier: Apache-2.0
// `molt_image_gm_missing{policy,digest}` (docs/adr/0013 decision 5): 1 missing, 0 present, no
// sample while a digest could not be checked — rendered into the operator's `/metrics` text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Identity } from '../../platform/https/identity.ts';
import { apiFixture } from '../../testkit/operator-api-fixture.ts';
import type { GmFinding } from '../images/gm-check.ts';
import type { ImagesDeps } from '../images/observe.ts';
import { FakeWorkloads } from '../ports/workloads.fake.ts';
import { buildOperatorApp } from './app.ts';
import { OperatorMetrics, renderMetrics } from './metrics.ts';

const finding = (policy: string, n: string, state: GmFinding['state']): GmFinding => ({
  policy,
  repository: 'r.example/acme/web',
  digest: `sha256:${n.repeat(64)}`,
  reason: 'GM',
  state,
});

const render = (gm?: readonly GmFinding[]): string[] =>
  renderMetrics({
    state: { machines: [], rollouts: [], starts: [], holds: {}, blocks: [] },
    metrics: new OperatorMetrics(),
    pools: [],
    leader: true,
    now: 0,
    gm,
  }).split('\n');

describe('the GM metric', () => {
  it('is 1 for a missing GM digest and 0 for a present one, with no sample while unknown', () => {
    const lines = render([
      finding('web', 'a', 'missing'),
      finding('web', 'b', 'present'),
      finding('dns', 'c', 'unknown'),
    ]);
    const samples = lines.filter((l) => l.startsWith('molt_image_gm_missing'));
    assert.deepEqual(samples, [
      `molt_image_gm_missing{policy="web",digest="sha256:${'a'.repeat(64)}"} 1`,
      `molt_image_gm_missing{policy="web",digest="sha256:${'b'.repeat(64)}"} 0`,
    ]);
    assert.ok(lines.includes('# TYPE molt_image_gm_missing gauge'));
  });

  it('is named without samples before the first check', () => {
    const lines = render();
    assert.ok(lines.includes('# TYPE molt_image_gm_missing gauge'));
    assert.equal(lines.filter((l) => l.startsWith('molt_image_gm_missing')).length, 0);
  });
});

describe('GET /metrics', () => {
  it('serves the GM watch’s last findings', async () => {
    const f = await apiFixture();
    const images: ImagesDeps = {
      policies: () => [],
      workloads: new FakeWorkloads(),
      scan: () => Promise.reject(new Error('not scanned')),
      now: () => 0,
      gm: { findings: () => [finding('web', 'a', 'missing')] },
    };
    const app = await buildOperatorApp(
      { ...f.deps, images },
      { identify: (): Identity => ({ role: 'node', name: 'prometheus' }) },
    );
    try {
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(
        res.body
          .split('\n')
          .includes(`molt_image_gm_missing{policy="web",digest="sha256:${'a'.repeat(64)}"} 1`),
        res.body,
      );
    } finally {
      await app.close();
    }
  });
});
