// SPDX-License-Identifier: Apache-2.0
// The Kubernetes store keeps a cluster's newest plans: moving ones and the newest that succeeded
// (whose arguments the components run with) are never dropped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubePlanPhase, KubeUpgrade } from '../../../core/kubernetes/types.ts';
import { bounded, KEPT_PLANS } from './kube-upgrades.ts';

const plan = (n: number, phase: KubePlanPhase): KubeUpgrade =>
  ({ id: `${String(n).padStart(4, '0')}-upgrade-v1.36.3`, cluster: 'c', phase }) as KubeUpgrade;

describe('bounded', () => {
  it('drops the oldest ended plans past the bound, keeping the newest that succeeded', () => {
    const plans = [
      plan(1, 'Failed'),
      plan(2, 'Succeeded'),
      ...Array.from({ length: KEPT_PLANS + 5 }, (_, i) => plan(i + 3, 'Failed')),
    ];
    const kept = bounded(plans);
    assert.equal(kept.length, KEPT_PLANS);
    assert.equal(kept[0]?.id, '0002-upgrade-v1.36.3', 'the newest success stays');
    assert.equal(kept.at(-1)?.id, plans.at(-1)?.id, 'the newest stay');
    assert.ok(!kept.some((p) => p.id.startsWith('0001')), 'the oldest failure goes');
  });
  it('keeps everything under the bound', () => {
    const plans = [plan(1, 'Failed'), plan(2, 'Succeeded')];
    assert.deepEqual(bounded(plans), plans);
  });
});
