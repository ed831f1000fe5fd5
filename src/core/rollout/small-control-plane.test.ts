// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plan } from './plan.ts';
import { acceptsQuorumLoss } from './small-control-plane.ts';
import { machine, rollout, snapshot, T0 } from './fixtures.test.ts';
import type { ClusterPolicy, FleetSnapshot } from './types.ts';

/** `n` control-plane machines of cluster `edge` in pool `cp`, one rollout of that pool. */
function edge(n: number, clusters?: ClusterPolicy[]): FleetSnapshot {
  const cps = Array.from({ length: n }, (_, i) =>
    machine(`cp-${String(i + 1)}`, { role: 'control-plane', pool: 'cp', cluster: 'edge' }),
  );
  return {
    ...snapshot({ machines: cps, rollouts: [rollout({ pool: 'cp' })] }),
    pools: [{ name: 'cp', policies: [] }],
    ...(clusters !== undefined && { clusters }),
  };
}

const decisions = (s: FleetSnapshot) =>
  plan(s, T0).decisions.map((d) => [d.machine, d.action, d.reason?.code]);

describe('small control planes', () => {
  it('keeps the control plane of a 1- or 2-machine cluster waiting unless the cluster accepts it', () => {
    for (const n of [1, 2]) {
      const d = plan(edge(n), T0).decisions[0];
      assert.equal(d?.action, 'wait', `${String(n)} member(s)`);
      assert.equal(d.reason?.code, 'SmallControlPlane');
      assert.match(d.reason.message, new RegExp(`etcd has no quorum while ${d.machine} is down`));
      assert.match(d.reason.message, /smallControlPlane: accept-downtime on cluster edge/);
    }
    const refusing = edge(2, [{ name: 'edge', smallControlPlane: 'refuse' }]);
    assert.equal(plan(refusing, T0).decisions[0]?.reason?.code, 'SmallControlPlane');
    const other = edge(2, [{ name: 'lab', smallControlPlane: 'accept-downtime' }]);
    assert.equal(plan(other, T0).decisions[0]?.reason?.code, 'SmallControlPlane');
  });

  it('starts one machine at a time under accept-downtime, the start stating the downtime', () => {
    const accepted = edge(2, [{ name: 'edge', smallControlPlane: 'accept-downtime' }]);
    assert.deepEqual(
      decisions(accepted).map(([, action, code]) => [action, code]),
      [
        ['start', 'EtcdDowntime'],
        ['wait', 'ControlPlaneBusy'],
      ],
    );
    const start = plan(accepted, T0).decisions[0];
    assert.equal(
      start?.reason?.message,
      `cluster edge has 2 etcd members: etcd and the Kubernetes API are unavailable while ${start?.machine ?? ''} reboots (smallControlPlane: accept-downtime)`,
    );
    assert.equal(acceptsQuorumLoss(accepted, accepted.machines[0]!), true);
  });

  it('leaves three-machine control planes and workers alone', () => {
    const three = edge(3, [{ name: 'edge', smallControlPlane: 'accept-downtime' }]);
    assert.deepEqual(decisions(three)[0]?.slice(1), ['start', undefined]);
    assert.equal(acceptsQuorumLoss(three, three.machines[0]!), false);
    const worker = machine('w-1', { cluster: 'edge' });
    assert.equal(
      acceptsQuorumLoss(edge(1, [{ name: 'edge', smallControlPlane: 'accept-downtime' }]), worker),
      false,
    );
  });
});
