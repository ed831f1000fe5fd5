// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdMemberView } from '../../protocol/agent-kubernetes.ts';
import { clusterInventory } from './inventory.ts';
import { world } from './fixtures.test.ts';

const member = (name: string, o: Partial<EtcdMemberView> = {}): EtcdMemberView => ({
  id: `${name}-hex`,
  name,
  peerUrls: [],
  clientUrls: [`https://${name}:2379`],
  isLeader: false,
  isLearner: false,
  ...o,
});

describe("a cluster's control plane as the plan sees it", () => {
  it('finds the leading machine by member name, or else by the host of its client URL', async () => {
    const w = await world();
    assert.equal((await clusterInventory(w.deps(), 'default')).leader, 'cp-2');
    w.agents.etcdMembers = () =>
      Promise.resolve([
        member('etcd-a'),
        member('etcd-b', { isLeader: true, clientUrls: ['https://cp-3:2379'] }),
      ]);
    const inv = await clusterInventory(w.deps(), 'default');
    assert.equal(inv.leader, 'cp-3');
    assert.equal(inv.etcd.message, '2 voting members, leader etcd-b');
  });

  it('says etcd is unhealthy when members disagree on the leader, a learner waits, or one is away', async () => {
    const w = await world();
    let calls = 0;
    w.agents.etcdMembers = () =>
      Promise.resolve([
        member('cp-1', { isLeader: ++calls === 1 }),
        member('cp-2', { isLeader: calls !== 1 }),
      ]);
    assert.match(
      (await clusterInventory(w.deps(), 'default')).etcd.message,
      /do not agree on one leader/,
    );
    w.agents.etcdMembers = () =>
      Promise.resolve([member('cp-1', { isLeader: true }), member('cp-2', { isLearner: true })]);
    assert.match(
      (await clusterInventory(w.deps(), 'default')).etcd.message,
      /learners not promoted yet: cp-2/,
    );
    w.agents.etcdMembers = (m) =>
      m.id === 'cp-3'
        ? Promise.reject(new Error('away'))
        : Promise.resolve([member('cp-1', { isLeader: true })]);
    const away = await clusterInventory(w.deps(), 'default');
    assert.equal(away.etcd.healthy, false);
    assert.match(away.etcd.message, /members unreachable: cp-3: away/);
  });

  it('refuses a cluster with no control-plane machine, and an agent that does not answer', async () => {
    const w = await world();
    await assert.rejects(clusterInventory(w.deps(), 'edge'), { code: 'MOLT_UNKNOWN_MACHINE' });
    w.agents.unreachable.add('cp-1');
    await assert.rejects(clusterInventory(w.deps(), 'default'), { code: 'MOLT_AGENT_UNREACHABLE' });
  });
});
