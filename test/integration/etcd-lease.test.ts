// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { createEtcdClusterLease } from '../../src/agent/adapters/etcd/cluster-lease.ts';
import { readLease } from '../../src/agent/adapters/etcd/lease-key.ts';
import { ErrorCode, isMoltError } from '../../src/protocol/index.ts';
import { clusterLeaseConformance } from '../../src/testkit/cluster-lease-conformance.ts';
import { startEtcdCluster, type EtcdCluster } from '../../src/lab/services/etcd.ts';
import { eventually } from '../../src/platform/process/managed-process.ts';

const ttlSeconds = 2;

clusterLeaseConformance({
  name: 'etcd 3.4, three members',
  ttlSeconds,
  rebootTtlSeconds: 10,
  start: async () => {
    const etcd = await startEtcdCluster({ members: 3 });
    return {
      open: (holder: string) =>
        createEtcdClusterLease({
          endpoints: etcd.endpoints,
          holder,
          ttlSeconds,
          rebootTtlSeconds: 10,
        }),
      elapse: (seconds: number) => sleep(seconds * 1000),
      loseKey: async () => {
        // What etcd does to a lease whose renewals stop arriving: it revokes it, and the key goes.
        const admin = new Etcd3({ hosts: [...etcd.endpoints] });
        try {
          const key = await readLease(admin, 5_000);
          if (key !== undefined) await admin.leaseClient.leaseRevoke({ ID: key.leaseId });
        } finally {
          admin.close();
        }
      },
      stop: () => etcd.stop(),
    };
  },
});

describe('etcd cluster lease without quorum', () => {
  let etcd: EtcdCluster;
  before(async () => {
    etcd = await startEtcdCluster({ members: 3 });
  });
  after(async () => {
    await etcd.stop();
  });

  it('reports an acquire without quorum as TimedOut or EtcdUnhealthy, and the unknown write self-cleans', async () => {
    const [m0, m1, m2] = etcd.members;
    await m1!.stop(0);
    await m2!.stop(0);
    const lease = createEtcdClusterLease({
      endpoints: [m0!.clientUrl],
      holder: 'cp-a',
      ttlSeconds,
      requestTimeoutMs: 1_000,
    });
    try {
      await assert.rejects(lease.acquire('op-no-quorum'), (e: unknown) => {
        assert.ok(isMoltError(e), String(e));
        assert.ok(
          [ErrorCode.TimedOut, ErrorCode.EtcdUnhealthy].includes(e.code as 'MOLT_TIMED_OUT'),
          e.code,
        );
        return true;
      });
    } finally {
      await lease.close();
    }
    await Promise.all([m1!.start(), m2!.start()]);
    await etcd.waitHealthy();
    const observer = createEtcdClusterLease({ endpoints: etcd.endpoints, holder: 'cp-b' });
    try {
      // Whatever the lone member had proposed is lease-attached: nobody renews it, so it goes.
      await eventually(
        async () => {
          assert.equal(await observer.holder(), undefined);
        },
        { timeoutMs: (ttlSeconds + 3) * 1000, intervalMs: 200 },
      );
      await observer.acquire('op-after');
      assert.equal((await observer.holder())?.holder, 'cp-b');
      await observer.release('op-after');
    } finally {
      await observer.close();
    }
  });
});
