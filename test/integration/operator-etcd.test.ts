// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3, GRPCDeadlineExceededError, type ComparatorBuilder } from 'etcd3';
import type { StoreCtx } from '../../src/operator/adapters/etcd-store/cas.ts';
import { layout } from '../../src/operator/adapters/etcd-store/layout.ts';
import { recordStart, updateRollout } from '../../src/operator/adapters/etcd-store/rollouts.ts';
import { createEtcdLeadership } from '../../src/operator/adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from '../../src/operator/adapters/etcd-store/operator-store.ts';
import { ErrorCode, isMoltError } from '../../src/protocol/index.ts';
import { operatorStoreConformance } from '../../src/testkit/operator-store-conformance.ts';
import { rolloutFixture } from '../../src/testkit/operator-store-fixtures.ts';
import { startEtcd, startEtcdCluster, type EtcdCluster } from '../../src/lab/services/etcd.ts';
import { eventually } from '../../src/platform/process/managed-process.ts';
import { leadershipConformance } from '../../src/testkit/leadership-conformance.ts';
import { rejectsWithCode } from '../../src/testkit/registry-conformance.ts';

const ttlSeconds = 2;
const leaderKey = '/molt/v1/operator/leader';

leadershipConformance({
  name: 'etcd 3.4',
  ttlSeconds,
  start: async () => {
    const etcd = await startEtcd();
    const admin = new Etcd3({ hosts: [...etcd.endpoints] });
    return {
      open: (id: string) => createEtcdLeadership({ endpoints: etcd.endpoints, id, ttlSeconds }),
      elapse: (seconds: number) => sleep(seconds * 1000),
      loseClaim: async () => {
        // What etcd does to a lease whose renewals stop arriving: it revokes it, and the key goes.
        const res = await admin.get(leaderKey).exec();
        const lease = res.kvs[0]?.lease;
        if (lease !== undefined) await admin.leaseClient.leaseRevoke({ ID: lease });
      },
      stop: async () => {
        admin.close();
        await etcd.stop();
      },
    };
  },
});

operatorStoreConformance({
  name: 'etcd 3.4',
  start: async () => {
    const etcd = await startEtcd();
    return {
      open: () => createEtcdOperatorStore({ endpoints: etcd.endpoints }),
      stop: () => etcd.stop(),
    };
  },
});

describe('etcd operator store', () => {
  let etcd: EtcdCluster;
  let admin: Etcd3;
  before(async () => {
    etcd = await startEtcd();
    admin = new Etcd3({ hosts: [...etcd.endpoints] });
  });
  after(async () => {
    admin.close();
    await etcd.stop();
  });

  it('keeps stores under different prefixes apart', async () => {
    const a = createEtcdOperatorStore({ endpoints: etcd.endpoints, prefix: '/t1/' });
    const b = createEtcdOperatorStore({ endpoints: etcd.endpoints, prefix: '/t2/' });
    try {
      await a.createRollout(rolloutFixture('r1'));
      await b.createRollout(rolloutFixture('r1'));
      await a.appendHistory({ at: 1, kind: 'warning', message: 'a' });
      assert.equal((await b.history()).length, 0);
      assert.equal((await b.read()).rollouts.length, 1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('reports a corrupt value as MOLT_STORE_CORRUPT naming the key, not a crash', async () => {
    const store = createEtcdOperatorStore({ endpoints: etcd.endpoints, prefix: '/corrupt/' });
    try {
      await store.createRollout(rolloutFixture('r1'));
      await admin.put('/corrupt/rollouts/r1').value('{"id":"r1",');
      await rejectsWithCode(store.read(), ErrorCode.StoreCorrupt, '/corrupt/rollouts/r1', 'JSON');
      await rejectsWithCode(
        store.updateRollout('r1', (r) => r),
        ErrorCode.StoreCorrupt,
        '/corrupt/rollouts/r1',
      );
      await admin
        .put('/corrupt/rollouts/r1')
        .value(JSON.stringify({ ...rolloutFixture('r1'), state: 'Sleeping' }));
      await rejectsWithCode(store.read(), ErrorCode.StoreCorrupt, 'state');
      await admin.put('/corrupt/rollouts/r1').value(JSON.stringify(rolloutFixture('r1')));
      await admin.put('/corrupt/history-seq').value('"seven"');
      await rejectsWithCode(
        store.appendHistory({ at: 1, kind: 'warning', message: 'x' }),
        ErrorCode.StoreCorrupt,
        'history-seq',
      );
      assert.equal((await store.read()).rollouts.length, 1);
    } finally {
      await store.close();
    }
  });
});

/**
 * A client whose first transaction loses its answer the way `fault` says: `after-commit` (etcd
 * applied it, the answer never came), `before-send` (it never left), or `late` (it commits a
 * moment after the caller gave up: etcd 3.4 keeps a timed-out proposal). Injected, not mocked.
 */
function faultyClient(
  real: Etcd3,
  fault: 'after-commit' | 'before-send' | 'late',
): { client: Etcd3; readonly late: Promise<unknown> } {
  let armed = true;
  let late: Promise<unknown> = Promise.resolve();
  const client = Object.create(real) as Etcd3;
  client.if = (...args: Parameters<Etcd3['if']>): ComparatorBuilder => {
    const builder = real.if(...args);
    if (!armed) return builder;
    armed = false;
    const commit = builder.commit.bind(builder);
    builder.commit = async () => {
      const lost = new GRPCDeadlineExceededError('deadline exceeded (injected)');
      if (fault === 'after-commit') await commit();
      if (fault === 'late')
        late = new Promise((r) => setTimeout(r, 5)).then(commit).catch((e: unknown) => e);
      throw lost;
    };
    return builder;
  };
  return {
    client,
    get late() {
      return late;
    },
  };
}

describe('etcd operator store: writes whose answer was lost', () => {
  let etcd: EtcdCluster;
  let real: Etcd3;
  before(async () => {
    etcd = await startEtcd();
    real = new Etcd3({ hosts: [...etcd.endpoints] });
  });
  after(async () => {
    real.close();
    await etcd.stop();
  });

  for (const fault of ['after-commit', 'before-send', 'late'] as const)
    it(`settles a compare-and-swap whose answer was lost (${fault}) and applies it exactly once`, async () => {
      const prefix = `/lost-${fault}/`;
      const store = createEtcdOperatorStore({ endpoints: etcd.endpoints, prefix });
      try {
        await store.createRollout({ ...rolloutFixture('r1'), createdAt: 0 });
        const faulty = faultyClient(real, fault);
        const ctx: StoreCtx = {
          client: faulty.client,
          keys: layout(prefix),
          timeoutMs: 2_000,
          maxAttempts: 10,
        };
        let runs = 0;
        const result = await updateRollout(ctx, 'r1', (r) => {
          runs++;
          return { ...r, createdAt: r.createdAt + 1 };
        });
        await faulty.late;
        assert.equal(result.createdAt, 1);
        assert.equal((await store.read()).rollouts[0]?.createdAt, 1);
        if (fault === 'after-commit') assert.equal(runs, 1, 'the re-read found the write landed');
        if (fault === 'before-send') assert.equal(runs, 2, 'fenced, then re-read and retried');
      } finally {
        await store.close();
      }
    });

  for (const fault of ['after-commit', 'before-send', 'late'] as const)
    it(`settles a start whose answer was lost (${fault}): recorded once, not refused as AlreadyStarted`, async () => {
      const prefix = `/lost-start-${fault}/`;
      const store = createEtcdOperatorStore({ endpoints: etcd.endpoints, prefix });
      try {
        await store.createRollout(rolloutFixture('r1'));
        const faulty = faultyClient(real, fault);
        const ctx: StoreCtx = {
          client: faulty.client,
          keys: layout(prefix),
          timeoutMs: 2_000,
          maxAttempts: 10,
        };
        const start = { machine: 'm1', pool: 'workers', rollout: 'r1', at: 7 };
        await recordStart(ctx, start, { phase: 'InFlight', startedAt: 7 });
        await faulty.late;
        const state = await store.read();
        assert.deepEqual(state.starts, [start]);
        assert.deepEqual(state.rollouts[0]?.machines, { m1: { phase: 'InFlight', startedAt: 7 } });
      } finally {
        await store.close();
      }
    });
});

describe('etcd operator store and leadership without quorum', () => {
  let etcd: EtcdCluster;
  before(async () => {
    etcd = await startEtcdCluster({ members: 3 });
  });
  after(async () => {
    await etcd.stop();
  });

  it('reports writes of unknown outcome, applies them at most once, and the leader steps down before its lease can expire', async () => {
    const [m0, m1, m2] = etcd.members;
    const endpoints = [m0!.clientUrl];
    const store = createEtcdOperatorStore({ endpoints, requestTimeoutMs: 500 });
    const leader = createEtcdLeadership({
      endpoints,
      id: 'op-a',
      ttlSeconds,
      requestTimeoutMs: 300,
    });
    try {
      await store.createRollout({ ...rolloutFixture('r1'), createdAt: 0 });
      await leader.campaign();
      let lost = 0;
      let lostAt = Infinity;
      leader.onLost(() => {
        lost++;
        lostAt = performance.now();
      });
      // One at a time (stopping all at once stalls a leader handing over to dying peers).
      await m1!.stop(0);
      await m2!.stop(0);
      const cutAt = performance.now();
      const unknown = (e: unknown): boolean => {
        assert.ok(isMoltError(e), String(e));
        assert.ok(
          [ErrorCode.TimedOut, ErrorCode.EtcdUnhealthy].includes(e.code as 'MOLT_TIMED_OUT'),
          e.message,
        );
        return true;
      };
      await assert.rejects(
        store.updateRollout('r1', (r) => ({ ...r, createdAt: r.createdAt + 1 })),
        unknown,
      );
      await assert.rejects(
        store.recordStart(
          { machine: 'm1', pool: 'workers', rollout: 'r1', at: 5 },
          { phase: 'InFlight', startedAt: 5 },
        ),
        unknown,
      );
      await eventually(
        () => {
          assert.equal(lost, 1);
          return Promise.resolve();
        },
        {
          timeoutMs: ttlSeconds * 1000,
          intervalMs: 50,
        },
      );
      assert.ok(!leader.isLeader());
      // It stopped acting before etcd could have expired its lease and let another lead.
      assert.ok(lostAt - cutAt < ttlSeconds * 1000, 'stepped down within the TTL');
      await Promise.all([m1!.start(), m2!.start()]);
      await etcd.waitHealthy();
      const afterQuorum = await eventually(() => store.read(), {
        timeoutMs: 10_000,
        intervalMs: 200,
      });
      const r1 = afterQuorum.rollouts.find((r) => r.id === 'r1');
      assert.ok(r1 !== undefined && [0, 1].includes(r1.createdAt), `createdAt ${r1?.createdAt}`);
      const started = afterQuorum.starts.filter((s) => s.machine === 'm1').length;
      assert.equal(
        started,
        r1.machines['m1'] === undefined ? 0 : 1,
        'start record and progress together',
      );
      const next = await store.updateRollout('r1', (r) => ({ ...r, createdAt: r.createdAt + 1 }));
      assert.equal(next.createdAt, r1.createdAt + 1);
      await leader.campaign();
      assert.equal(await leader.leader(), 'op-a');
      await leader.resign();
    } finally {
      await leader.close();
      await store.close();
    }
  });
});

describe('etcd operator store and leadership with one member down', () => {
  let etcd: EtcdCluster;
  before(async () => {
    etcd = await startEtcdCluster({ members: 3 });
  });
  after(async () => {
    await etcd.stop();
  });

  it('keeps the leadership and takes every write while a member is down, as in a control-plane reboot', async () => {
    const [m0, m1, m2] = etcd.members;
    // The member that is down is listed four times: each call dials it first two times in three,
    // so these seconds meet what a rollout's reboots meet by chance.
    const endpoints = [m0!.clientUrl, m1!.clientUrl, ...Array<string>(4).fill(m2!.clientUrl)];
    const store = createEtcdOperatorStore({ endpoints, requestTimeoutMs: 2_000 });
    // The default TTL's 10 s leave a renewal 3.3 s to find a member; 6 s leave it 2 s.
    const ttl = 6;
    const leader = createEtcdLeadership({ endpoints, id: 'op-a', ttlSeconds: ttl });
    try {
      await store.createRollout({ ...rolloutFixture('r1'), createdAt: 0 });
      await leader.campaign();
      let lost = 0;
      leader.onLost(() => {
        lost++;
      });
      await m2!.stop(0);
      const until = performance.now() + 2.5 * ttl * 1000;
      let writes = 0;
      while (performance.now() < until) {
        await store.updateRollout('r1', (r) => ({ ...r, createdAt: r.createdAt + 1 }));
        writes++;
        assert.ok(leader.isLeader(), `still leading after ${String(writes)} writes`);
        await sleep(100);
      }
      assert.equal(lost, 0, 'the leadership was never lost');
      const r1 = (await store.read()).rollouts.find((r) => r.id === 'r1');
      assert.equal(r1?.createdAt, writes, 'every write applied once');
      await m2!.start();
      await etcd.waitHealthy();
    } finally {
      await leader.close();
      await store.close();
    }
  });
});
