// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { nodeMachine } from './nodes.ts';

const node = (o: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ip?: string;
}): V1Node => ({
  metadata: {
    name: 'cp-1',
    labels: { 'node-restriction.kubernetes.io/molt-pool': 'control-plane', ...o.labels },
    ...(o.annotations !== undefined && { annotations: o.annotations }),
  },
  ...(o.ip !== undefined && { status: { addresses: [{ type: 'InternalIP', address: o.ip }] } }),
});

describe('a Node as a machine', () => {
  it('takes pool, role, labels and the advertised endpoint', () => {
    const n = nodeMachine(
      node({
        labels: { 'node-role.kubernetes.io/control-plane': '', 'topology.kubernetes.io/zone': 'a' },
        annotations: { 'molt.dev/agent-endpoint': 'https://10.0.0.5:7443' },
        ip: '10.0.0.9',
      }),
      { cluster: 'prod', agentPort: 9000 },
    );
    assert.ok('machine' in n);
    assert.deepEqual(n.machine, {
      id: 'cp-1',
      endpoint: 'https://10.0.0.5:7443',
      role: 'control-plane',
      pool: 'control-plane',
      labels: {
        'node-restriction.kubernetes.io/molt-pool': 'control-plane',
        'node-role.kubernetes.io/control-plane': '',
        'topology.kubernetes.io/zone': 'a',
      },
      cluster: 'prod',
      fromNode: true,
    });
  });

  it('falls back to the InternalIP on the configured port (IPv6 in brackets)', () => {
    const v4 = nodeMachine(node({ ip: '10.0.0.9' }), { agentPort: 7443 });
    assert.ok('machine' in v4);
    assert.equal(v4.machine.endpoint, 'https://10.0.0.9:7443');
    assert.equal(v4.machine.role, 'worker');
    const v6 = nodeMachine(node({ ip: 'fd00::9' }), { agentPort: 7443 });
    assert.ok('machine' in v6);
    assert.equal(v6.machine.endpoint, 'https://[fd00::9]:7443');
  });

  it('is no machine without a usable endpoint, and says what to set', () => {
    const none = nodeMachine(node({ ip: '10.0.0.9' }), {});
    assert.ok('skipped' in none);
    assert.match(none.skipped, /kubernetes\.advertise/);
    assert.match(none.skipped, /kubernetes\.nodes\.agentPort/);
    const bad = nodeMachine(
      node({ annotations: { 'molt.dev/agent-endpoint': 'http://10.0.0.5:7443/x' } }),
      {},
    );
    assert.ok('skipped' in bad, 'only an https://host:port endpoint is taken');
  });

  it('takes no pool from a label the node may set on itself', () => {
    // A kubelet may write molt.dev/pool on its own Node; taking it would let a machine join a
    // pool (its rollouts, its holds, its channel) without anyone who may label Nodes agreeing.
    const selfLabelled: V1Node = {
      metadata: {
        name: 'w-9',
        labels: { 'molt.dev/pool': 'control-plane', 'node-role.kubernetes.io/worker': '' },
        annotations: { 'molt.dev/agent-endpoint': 'https://10.0.0.5:7443' },
      },
    };
    const n = nodeMachine(selfLabelled, { agentPort: 7443 });
    assert.ok('skipped' in n, 'a Node with only molt.dev/pool is no machine');
    assert.equal(n.node, 'w-9');
    assert.match(
      n.skipped,
      /kubectl label node w-9 node-restriction\.kubernetes\.io\/molt-pool=<pool>/,
    );
  });
});
