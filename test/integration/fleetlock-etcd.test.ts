// SPDX-License-Identifier: Apache-2.0
// The FleetLock store on real etcd 3.4: the conformance suite, then the HTTP endpoint served by two
// operators over one etcd, as a fleet behind a load balancer would see it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerFleetLock } from '../../src/operator/api/fleetlock.ts';
import {
  EtcdFleetLockStore,
  fleetLockKey,
} from '../../src/operator/adapters/etcd-fleetlock/store.ts';
import { startEtcd, type EtcdCluster } from '../../src/lab/services/etcd.ts';
import { fleetLockStoreConformance } from '../../src/testkit/fleetlock-store-conformance.ts';

fleetLockStoreConformance({
  name: 'etcd 3.4',
  start: async () => {
    const etcd = await startEtcd();
    return {
      open: () => new EtcdFleetLockStore({ endpoints: etcd.endpoints }),
      stop: () => etcd.stop(),
    };
  },
});

describe('FleetLock endpoint on etcd', () => {
  let etcd: EtcdCluster;
  const apps: FastifyInstance[] = [];
  const stores: EtcdFleetLockStore[] = [];
  const internal: unknown[] = [];
  let bases: string[] = [];

  /** One operator: its own etcd client and its own HTTP server. */
  async function operator(slots: number): Promise<string> {
    const store = new EtcdFleetLockStore({ endpoints: etcd.endpoints, requestTimeoutMs: 1_000 });
    const app = Fastify({ logger: false });
    await registerFleetLock(app, {
      store,
      groups: (g) => (g === 'default' || g === 'workers.eu-1' ? { slots } : undefined),
      now: () => Date.now(),
      onInternalError: (e) => internal.push(e),
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    stores.push(store);
    apps.push(app);
    const address = app.server.address();
    assert.ok(typeof address === 'object' && address !== null);
    return `http://127.0.0.1:${address.port}/fleetlock/`;
  }

  const post = async (base: string, op: string, id: string, group = 'default') => {
    const res = await fetch(new URL(`v1/${op}`, base), {
      method: 'POST',
      headers: { 'fleet-lock-protocol': 'true' },
      body: new TextEncoder().encode(JSON.stringify({ client_params: { id, group } })),
    });
    return { status: res.status, text: await res.text() };
  };

  const stored = async (group: string): Promise<string | null> => {
    const admin = new Etcd3({ hosts: [...etcd.endpoints] });
    try {
      return await admin.get(fleetLockKey(group)).string();
    } finally {
      admin.close();
    }
  };

  before(async () => {
    etcd = await startEtcd();
    bases = [await operator(3), await operator(3)];
  });
  after(async () => {
    for (const app of apps) await app.close();
    for (const store of stores) await store.close();
    await etcd.stop();
  });

  it('grants exactly the slots to 20 nodes storming two operators, then frees them all', async () => {
    const ids = Array.from({ length: 20 }, (_, n) => `node-${n}`);
    const first = await Promise.all(ids.map((id, n) => post(bases[n % 2]!, 'pre-reboot', id)));
    assert.equal(first.filter((r) => r.status === 200).length, 3);
    for (const r of first.filter((x) => x.status !== 200)) {
      assert.equal(r.status, 423);
      assert.equal((JSON.parse(r.text) as { kind: string }).kind, 'failed_lock_semaphore_full');
    }
    const record = JSON.parse((await stored('default')) ?? 'null') as { holders: string[] };
    assert.deepEqual(
      [...record.holders].sort(),
      ids.filter((_, n) => first[n]!.status === 200).sort(),
    );
    // Recursive lock on the other operator, then release everywhere (idempotent).
    const holder = record.holders[0]!;
    assert.equal((await post(bases[1]!, 'pre-reboot', holder)).status, 200);
    const released = await Promise.all(
      ids.map((id, n) => post(bases[(n + 1) % 2]!, 'steady-state', id)),
    );
    assert.ok(released.every((r) => r.status === 200));
    assert.equal(await stored('default'), '{"slots":3,"holders":[]}');
  });

  it('refuses to reuse a value molt did not write instead of reading it as free', async () => {
    const admin = new Etcd3({ hosts: [...etcd.endpoints] });
    try {
      await admin.put(fleetLockKey('workers.eu-1')).value('{"holders":"everyone"}');
    } finally {
      admin.close();
    }
    const r = await post(bases[0]!, 'pre-reboot', 'node-x', 'workers.eu-1');
    assert.equal(r.status, 500);
    assert.equal((JSON.parse(r.text) as { kind: string }).kind, 'internal_error');
    assert.equal(await stored('workers.eu-1'), '{"holders":"everyone"}');
    assert.equal(internal.length, 1);
  });

  it('answers store_unavailable while etcd is down', async () => {
    await etcd.members[0]!.stop(0);
    const r = await post(bases[0]!, 'pre-reboot', 'node-y');
    assert.equal(r.status, 503);
    assert.equal((JSON.parse(r.text) as { kind: string }).kind, 'store_unavailable');
  });
});
