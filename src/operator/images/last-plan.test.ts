// SPDX-License-Identifier: Apache-2.0
// The image driver's last plan (docs/adr/0013 decision 8): empty before a pass; each pass of the
// real driver writes what the planner decided for every workload of the live image rollouts, and
// those rollouts — the canary starting, the rest waiting on it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scanOf } from '../../testkit/image-scan.ts';
import { at, d, followRebuilds, putDeployments } from '../../testkit/image-world.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { FakeWorkloads } from '../ports/workloads.fake.ts';
import { imagePass } from './drive.ts';
import { createImagePlanHolder } from './last-plan.ts';

describe('the image driver’s last plan', () => {
  it('is empty before a pass, then holds each pass’s decisions and live image rollouts', async () => {
    let tags: Record<string, string> = { '1.8.0': d(1), '1.8.0-rev2': d(1) };
    const workloads = new FakeWorkloads(1);
    putDeployments(
      workloads,
      [
        ['canary', 'canary-web'],
        ['shop', 'web-a'],
      ],
      at(d(1)),
    );
    const policy = followRebuilds({ canary: { namespaces: ['canary'], soakMs: 60_000 } });
    const lastPlan = createImagePlanHolder();
    const deps = {
      ...{ policies: () => [policy], workloads, now: () => 1_000_000, lastPlan },
      scan: () => Promise.resolve(scanOf(tags)),
      store: new MemoryOperatorStore(),
      log: () => undefined,
    };
    assert.equal(lastPlan.last(), undefined);
    await imagePass(deps);
    assert.deepEqual(
      lastPlan.last()?.rollouts,
      [],
      'a pass with nothing to move holds an empty plan',
    );
    assert.equal(lastPlan.last()?.plan.at, 1_000_000);
    tags = { ...tags, '1.8.0-rev2': d(2) };
    await imagePass(deps);
    const last = lastPlan.last();
    assert.ok(last !== undefined);
    assert.deepEqual(
      last.rollouts.map((r) => [r.id, r.state, r.images?.policy]),
      [['img-web-1.8.0-rev2-02020202', 'Active', 'web']],
    );
    const byUnit = new Map(last.plan.decisions.map((x) => [x.machine, x]));
    assert.equal(byUnit.get('Deployment/canary/canary-web')?.action, 'start');
    assert.equal(byUnit.get('Deployment/shop/web-a')?.action, 'wait');
    assert.ok(byUnit.get('Deployment/shop/web-a')?.reason?.code);
  });
});
