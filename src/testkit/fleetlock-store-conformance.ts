// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link FleetLockStore} must do (STYLE §7), run against the memory adapter and against
 * real etcd: reads carry a revision, a write succeeds only on the revision it names (creation
 * included), one of two racing writers wins, groups are independent, lockers racing through
 * read → lock → compare-and-swap never put more holders in a group than it has slots, and slot
 * expiries round-trip so that an expired slot is recovered exactly once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  expiryOf,
  lock,
  newSemaphore,
  recover,
  unlock,
  withSlots,
  type Semaphore,
} from '../core/fleetlock/semaphore.ts';
import type { FleetLockStore } from '../operator/ports/fleetlock-store.ts';

/** A store backend the suite can run against; every store opened shares one backend. */
export interface FleetLockStoreTarget {
  readonly name: string;
  start(): Promise<{
    /** A new client on the shared backend (on etcd: its own connection, like a second operator). */
    open(): FleetLockStore;
    stop(): Promise<void>;
  }>;
}

let groupCounter = 0;
/** A fresh group per test, so tests on a shared backend never see each other's writes. */
const freshGroup = (): string => `conf-${process.pid}.${++groupCounter}-Group`;

/** Read → pure change → compare-and-swap, until written or the change declines (undefined). */
async function casLoop(
  store: FleetLockStore,
  group: string,
  change: (current: Semaphore | undefined) => Semaphore | undefined,
): Promise<boolean> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const { sem, revision } = await store.read(group);
    const next = change(sem);
    if (next === undefined) return false;
    if (await store.write(group, next, revision)) return true;
    await new Promise((r) => setTimeout(r, Math.random() * 5));
  }
  throw new Error(`no write succeeded on ${group} in 200 attempts`);
}

const locker =
  (slots: number, id: string) =>
  (current: Semaphore | undefined): Semaphore | undefined => {
    const r = lock(withSlots(current ?? newSemaphore(slots), slots), id);
    return r.reason === 'Acquired' ? r.sem : undefined;
  };

/** Recover expired slots at `now`, then lock `id` until `now + ttl` (the endpoint's pre-reboot). */
const timedLocker =
  (slots: number, id: string, now: number, ttl = 60_000) =>
  (current: Semaphore | undefined): Semaphore | undefined => {
    const base = recover(withSlots(current ?? newSemaphore(slots), slots), now, ttl).sem;
    const r = lock(base, id, now + ttl);
    return r.ok && r.sem !== current ? r.sem : undefined;
  };

const unlocker =
  (id: string) =>
  (current: Semaphore | undefined): Semaphore | undefined => {
    if (current === undefined) return undefined;
    const r = unlock(current, id);
    return r.released ? r.sem : undefined;
  };

export function fleetLockStoreConformance(target: FleetLockStoreTarget): void {
  describe(`fleetlock store conformance: ${target.name}`, () => {
    let env: Awaited<ReturnType<FleetLockStoreTarget['start']>>;
    const opened: FleetLockStore[] = [];
    const open = (): FleetLockStore => {
      const store = env.open();
      opened.push(store);
      return store;
    };
    before(async () => {
      env = await target.start();
    });
    after(async () => {
      for (const s of opened) await s.close();
      await env.stop();
    });

    it('reads a group never written as no semaphore, with a revision to create it at', async () => {
      const store = open();
      const group = freshGroup();
      const first = await store.read(group);
      assert.equal(first.sem, undefined);
      assert.equal(typeof first.revision, 'string');
      assert.equal(await store.write(group, newSemaphore(2), first.revision), true);
      const second = await store.read(group);
      assert.deepEqual(second.sem, { slots: 2, holders: [] });
      assert.notEqual(second.revision, first.revision);
    });

    it('refuses a write on a stale revision and keeps the stored value', async () => {
      const store = open();
      const group = freshGroup();
      const { revision: absent } = await store.read(group);
      assert.ok(await store.write(group, { slots: 1, holders: ['a'] }, absent));
      const { revision } = await store.read(group);
      assert.equal(await store.write(group, { slots: 1, holders: ['b'] }, absent), false);
      assert.ok(await store.write(group, { slots: 1, holders: [] }, revision));
      assert.equal(await store.write(group, { slots: 1, holders: ['c'] }, revision), false);
      assert.deepEqual((await store.read(group)).sem, { slots: 1, holders: [] });
    });

    it('lets exactly one of two racing creators win', async () => {
      const [a, b] = [open(), open()];
      const group = freshGroup();
      const [ra, rb] = await Promise.all([a.read(group), b.read(group)]);
      const wins = await Promise.all([
        a.write(group, { slots: 1, holders: ['a'] }, ra.revision),
        b.write(group, { slots: 1, holders: ['b'] }, rb.revision),
      ]);
      assert.equal(wins.filter(Boolean).length, 1);
      const winner = wins[0] ? 'a' : 'b';
      assert.deepEqual((await a.read(group)).sem?.holders, [winner]);
    });

    it('lets exactly one of two racing updaters of the same revision win', async () => {
      const [a, b] = [open(), open()];
      const group = freshGroup();
      assert.ok(await a.write(group, newSemaphore(2), (await a.read(group)).revision));
      const [ra, rb] = await Promise.all([a.read(group), b.read(group)]);
      assert.equal(ra.revision, rb.revision);
      const wins = await Promise.all([
        a.write(group, { slots: 2, holders: ['a'] }, ra.revision),
        b.write(group, { slots: 2, holders: ['b'] }, rb.revision),
      ]);
      assert.equal(wins.filter(Boolean).length, 1);
    });

    it('keeps groups independent: a write to one does not conflict with another', async () => {
      const store = open();
      const [g1, g2] = [freshGroup(), freshGroup()];
      const before2 = await store.read(g2);
      assert.ok(await store.write(g1, newSemaphore(1), (await store.read(g1)).revision));
      assert.equal((await store.read(g2)).revision, before2.revision);
      assert.ok(await store.write(g2, newSemaphore(3), before2.revision));
      assert.deepEqual((await store.read(g1)).sem, { slots: 1, holders: [] });
      assert.deepEqual((await store.read(g2)).sem, { slots: 3, holders: [] });
    });

    it('round-trips holders in order, case-sensitively, for any valid group name', async () => {
      const store = open();
      const group = `${freshGroup()}.workers-A.b`;
      const sem = { slots: 5, holders: ['node-B', 'node-b', '8d3f0c6a2b1e4f5a9c7d6e5f4a3b2c1d'] };
      assert.ok(await store.write(group, sem, (await store.read(group)).revision));
      assert.deepEqual((await store.read(group)).sem, sem);
    });

    it('never lets concurrent lockers on several clients exceed the slots', async () => {
      const stores = [open(), open(), open()];
      const client = (n: number): FleetLockStore => stores[n % stores.length] ?? open();
      const group = freshGroup();
      const slots = 3;
      const ids = Array.from({ length: 20 }, (_, n) => `node-${n}`);
      const granted = await Promise.all(
        ids.map((id, n) => casLoop(client(n), group, locker(slots, id))),
      );
      const holders = (await client(0).read(group)).sem?.holders ?? [];
      assert.equal(granted.filter(Boolean).length, slots);
      assert.deepEqual(
        [...holders].sort(),
        ids.filter((_, n) => granted[n]).sort(),
        'every granted locker, and only those, holds a slot',
      );
    });

    it('loses no update when holders release concurrently', async () => {
      const stores = [open(), open()];
      const client = (n: number): FleetLockStore => stores[n % stores.length] ?? open();
      const group = freshGroup();
      const ids = Array.from({ length: 10 }, (_, n) => `node-${n}`);
      await Promise.all(ids.map((id, n) => casLoop(client(n), group, locker(10, id))));
      assert.equal((await client(0).read(group)).sem?.holders.length, 10);
      await Promise.all(ids.map((id, n) => casLoop(client(n), group, unlocker(id))));
      assert.deepEqual((await client(1).read(group)).sem?.holders, []);
    });

    it('round-trips slot expiries, and a record without them', async () => {
      const store = open();
      const group = freshGroup();
      const sem = {
        slots: 3,
        holders: ['a', 'constructor'],
        expires: { a: 1_000, constructor: 2 },
      };
      assert.ok(await store.write(group, sem, (await store.read(group)).revision));
      const read = (await store.read(group)).sem;
      assert.deepEqual(read, sem);
      assert.equal(expiryOf(read, 'constructor'), 2);
      const plain = { slots: 1, holders: ['legacy'] };
      assert.ok(await store.write(group, plain, (await store.read(group)).revision));
      assert.deepEqual((await store.read(group)).sem, plain);
    });

    it('recovers an expired slot exactly once when lockers race for it', async () => {
      const stores = [open(), open(), open()];
      const client = (n: number): FleetLockStore => stores[n % stores.length] ?? open();
      const group = freshGroup();
      assert.ok(await casLoop(client(0), group, timedLocker(1, 'dead', 0, 1_000)));
      const ids = Array.from({ length: 12 }, (_, n) => `node-${n}`);
      const granted = await Promise.all(
        ids.map((id, n) => casLoop(client(n), group, timedLocker(1, id, 5_000))),
      );
      assert.equal(granted.filter(Boolean).length, 1);
      const sem = (await client(1).read(group)).sem;
      assert.ok(sem !== undefined);
      assert.deepEqual(
        sem.holders,
        ids.filter((_, n) => granted[n]),
      );
      assert.equal(expiryOf(sem, sem.holders[0] ?? ''), 65_000);
    });

    it('lets a renewal and a recovery race without both holding the slot', async () => {
      const [a, b] = [open(), open()];
      const group = freshGroup();
      assert.ok(await casLoop(a, group, timedLocker(1, 'h', 0, 1_000)));
      // The holder renews just before its expiry; another node arrives just after it.
      await Promise.all([
        casLoop(a, group, timedLocker(1, 'h', 900, 5_000)),
        casLoop(b, group, timedLocker(1, 'x', 1_000, 5_000)),
      ]);
      const sem = (await a.read(group)).sem;
      assert.equal(sem?.holders.length, 1, JSON.stringify(sem));
    });
  });
}
