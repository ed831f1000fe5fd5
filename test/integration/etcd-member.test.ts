// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { etcdMemberConformance } from '../../src/testkit/etcd-member-conformance.ts';
import { startLabCluster, type LabCluster } from './etcd-lab-cluster.ts';

etcdMemberConformance({
  name: 'etcd 3.4 run by the lab service',
  start: async () => {
    const cluster = await startLabCluster(3);
    const machine = (i: number) => cluster.machines[i]!;
    return {
      names: cluster.machines.map((m) => m.name),
      member: (i: number) => machine(i).member,
      down: (i: number) => machine(i).service.stopAll(),
      up: (i: number) => machine(i).service.startAll(),
      stop: () => cluster.stop(),
    };
  },
});

describe('etcd member: leave and rejoin as a new member on real etcd', () => {
  let cluster: LabCluster;
  before(async () => {
    cluster = await startLabCluster(3);
  });
  after(async () => {
    await cluster.stop();
  });

  it('wipes the member, adds it as a learner, promotes it, and it serves all data', async () => {
    const [, , m2] = cluster.machines;
    const writer = new Etcd3({ hosts: [...cluster.endpoints], dialTimeout: 2_000 });
    try {
      for (let i = 0; i < 200; i++) await writer.put(`molt/test/data/${i}`).value(`v${i}`);
      await m2!.service.stopAll(); // StopServices
      await m2!.member.leave(); // LeaveEtcd
      await writer.put('molt/test/while-away').value('written without m2');
      await m2!.member.rejoin({ asNewMember: true });
    } finally {
      writer.close();
    }
    const h = await m2!.member.healthy();
    assert.deepEqual([h.healthy, h.learner], [true, false], h.message);
    const reader = new Etcd3({ hosts: [m2!.clientUrl], dialTimeout: 2_000 });
    try {
      const all = await reader.getAll().prefix('molt/test/data/').strings();
      assert.equal(Object.keys(all).length, 200);
      assert.equal(all['molt/test/data/199'], 'v199');
      assert.equal(await reader.get('molt/test/while-away').string(), 'written without m2');
      const members = await reader.cluster.memberList({});
      assert.equal(members.members.length, 3);
      assert.ok(members.members.every((m) => !m.isLearner && m.name !== ''));
    } finally {
      reader.close();
    }
    assert.equal(
      (await cluster.machines[0]!.member.checkQuorum({ preserve: false, force: false })).ok,
      true,
    );
  });
});
