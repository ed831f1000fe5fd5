// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link OperatorStore} must do (docs/adr/0005 §4), run against the memory adapter and
 * against real etcd: CRUD of machines, rollouts, holds and blocks; compare-and-swap updates that lose
 * no write under concurrent writers; atomic `recordStart` (a machine started at most once, even
 * raced); start pruning; increasing history seqs, the head and forward-only notification cursors;
 * Kubernetes plans (`operator-store-kube.ts`); state that outlives the store instance (a restart).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ErrorCode } from '../protocol/index.ts';
import type { MachineProgress, Rollout } from '../core/rollout/types.ts';
import type { OperatorStore } from '../operator/ports/store.ts';
import {
  fresh,
  inFlight,
  machineFixture,
  nth,
  fullRolloutFixture,
  rolloutFixture,
  startOf,
  useStores,
  type OperatorStoreTarget,
} from './operator-store-fixtures.ts';
import { rejectsWithCode } from './registry-conformance.ts';
import { holdAndBlockConformance } from './operator-store-holds.ts';
import { notifyCursorConformance } from './operator-store-notify.ts';
import { kubeUpgradeConformance } from './operator-store-kube.ts';

export type { OperatorStoreTarget } from './operator-store-fixtures.ts';

export function operatorStoreConformance(target: OperatorStoreTarget): void {
  describe(`operator store conformance: ${target.name}`, () => {
    const { open, close, store: initial } = useStores(target);
    let store: OperatorStore;
    before(() => {
      store = initial();
    });

    it('starts empty', async () => {
      assert.deepEqual(await store.read(), {
        machines: [],
        rollouts: [],
        starts: [],
        holds: {},
        blocks: [],
      });
      assert.deepEqual(await store.history(), []);
    });

    it('puts, replaces and removes machines', async () => {
      const [a, b] = [fresh('m'), fresh('m')];
      await store.putMachine(machineFixture(a, { zone: 'z1' }));
      await store.putMachine({ ...machineFixture(b), role: 'control-plane', cluster: 'k1' });
      await store.putMachine(machineFixture(a, { zone: 'z2' }));
      const mine = (await store.read()).machines.filter((m) => [a, b].includes(m.id));
      assert.deepEqual(
        mine.sort((x, y) => x.id.localeCompare(y.id)),
        [
          machineFixture(a, { zone: 'z2' }),
          { ...machineFixture(b), role: 'control-plane', cluster: 'k1' },
        ],
      );
      await store.removeMachine(a);
      await store.removeMachine(a); // idempotent
      const ids = (await store.read()).machines.map((m) => m.id);
      assert.ok(!ids.includes(a) && ids.includes(b));
    });

    it('keeps every field of a rollout, through create and update (`from` was dropped)', async () => {
      const full = fullRolloutFixture(fresh('full'));
      const read = async (): Promise<Rollout | undefined> =>
        (await store.read()).rollouts.find((r) => r.id === full.id);
      await store.createRollout(full);
      assert.deepEqual(await read(), full);
      await store.updateRollout(full.id, (r) => ({ ...r, state: 'Cancelled' }));
      assert.deepEqual(await read(), { ...full, state: 'Cancelled' });
    });

    it('creates a rollout once, and refuses unknown rollout ids', async () => {
      const id = fresh('r');
      await store.createRollout(rolloutFixture(id));
      assert.deepEqual(
        (await store.read()).rollouts.find((r) => r.id === id),
        rolloutFixture(id),
      );
      await rejectsWithCode(store.createRollout(rolloutFixture(id)), ErrorCode.RolloutExists, id);
      const missing = fresh('missing');
      await rejectsWithCode(
        store.updateRollout(missing, (r) => r),
        ErrorCode.RolloutNotFound,
        missing,
      );
      await rejectsWithCode(
        store.recordStart(startOf(missing, 'm1', 1), inFlight(1)),
        ErrorCode.RolloutNotFound,
        missing,
      );
    });

    it('updates by compare-and-swap and returns the stored result', async () => {
      const id = fresh('r');
      await store.createRollout(rolloutFixture(id));
      const updated = await store.updateRollout(id, (r) => ({ ...r, state: 'Paused' }));
      assert.equal(updated.state, 'Paused');
      const again = open(); // another instance reads what the first wrote
      const seen = (await again.read()).rollouts.find((r) => r.id === id);
      assert.deepEqual(seen, updated);
    });

    it('loses no update among 20 concurrent writers on several instances', async () => {
      const id = fresh('r');
      await store.createRollout({ ...rolloutFixture(id), createdAt: 0 });
      const writers = [store, open(), open(), open()];
      const runs: number[] = [];
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          nth(writers, i % writers.length).updateRollout(id, (r) => {
            runs.push(i);
            return {
              ...r,
              createdAt: r.createdAt + 1,
              machines: { ...r.machines, [`m${i}`]: { phase: 'Succeeded' } },
            };
          }),
        ),
      );
      const final = (await store.read()).rollouts.find((r) => r.id === id);
      assert.equal(final?.createdAt, 20);
      assert.equal(Object.keys(final.machines).length, 20);
      assert.ok(runs.length >= 20);
    });

    it('records a start atomically with its progress and refuses a second start', async () => {
      const id = fresh('r');
      await store.createRollout(rolloutFixture(id, { m2: { phase: 'Pending' } }));
      await store.recordStart(startOf(id, 'm1', 1_800_000_000_100), inFlight(1_800_000_000_100));
      const state = await store.read();
      assert.deepEqual(
        state.rollouts.find((r) => r.id === id)?.machines['m1'],
        inFlight(1_800_000_000_100),
      );
      assert.deepEqual(
        state.starts.filter((s) => s.rollout === id),
        [startOf(id, 'm1', 1_800_000_000_100)],
      );
      await rejectsWithCode(
        store.recordStart(startOf(id, 'm1', 1_800_000_000_200), inFlight(1_800_000_000_200)),
        ErrorCode.AlreadyStarted,
        'm1',
      );
      // An explicit Pending entry is not progress: the machine can start.
      await store.recordStart(startOf(id, 'm2', 1_800_000_000_300), inFlight(1_800_000_000_300));
      const after = await store.read();
      assert.equal(after.starts.filter((s) => s.rollout === id).length, 2);
      assert.equal(after.rollouts.find((r) => r.id === id)?.machines['m2']?.phase, 'InFlight');
    });

    it('lets exactly one of 8 concurrent starts of the same machine win', async () => {
      const id = fresh('r');
      await store.createRollout(rolloutFixture(id));
      const writers = [store, open(), open()];
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          nth(writers, i % writers.length).recordStart(
            startOf(id, 'm1', 1_800_000_001_000 + i),
            inFlight(1_800_000_001_000 + i),
          ),
        ),
      );
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      assert.equal(won.length, 1, `winners: ${won.join(', ')}`);
      for (const r of results)
        if (r.status === 'rejected')
          assert.equal((r.reason as { code?: string }).code, ErrorCode.AlreadyStarted);
      const state = await store.read();
      const starts = state.starts.filter((s) => s.rollout === id);
      assert.deepEqual(starts, [startOf(id, 'm1', 1_800_000_001_000 + nth(won, 0))]);
      assert.equal(
        state.rollouts.find((r) => r.id === id)?.machines['m1']?.startedAt,
        1_800_000_001_000 + nth(won, 0),
      );
    });

    it('lands concurrent starts of different machines without losing any', async () => {
      const id = fresh('r');
      await store.createRollout(rolloutFixture(id));
      const writers = [store, open()];
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          nth(writers, i % 2).recordStart(startOf(id, `m${i}`, 1_800_000_002_000), inFlight(i)),
        ),
      );
      const state = await store.read();
      assert.equal(state.starts.filter((s) => s.rollout === id).length, 10);
      const progress = state.rollouts.find((r) => r.id === id)?.machines ?? {};
      assert.deepEqual(
        Object.keys(progress).sort(),
        Array.from({ length: 10 }, (_, i) => `m${i}`).sort(),
      );
    });

    it('prunes only start records older than the cutoff', async () => {
      const id = fresh('r');
      await store.createRollout(rolloutFixture(id));
      for (const [m, at] of [
        ['a', 1_000],
        ['b', 2_000],
        ['c', 2_500],
        ['d', 3_000],
      ] as const)
        await store.recordStart(startOf(id, m, at), inFlight(at));
      await store.pruneStarts(2_500);
      const left = (await store.read()).starts.filter((s) => s.rollout === id);
      assert.deepEqual(
        left.map((s) => s.machine),
        ['c', 'd'],
      );
      // Progress is not history: pruning keeps the machines started.
      const machines = (await store.read()).rollouts.find((r) => r.id === id)?.machines ?? {};
      assert.equal(Object.keys(machines).length, 4);
    });

    holdAndBlockConformance(() => store);
    notifyCursorConformance(() => store, open);
    kubeUpgradeConformance(() => store, open);

    it('hands out strictly increasing history seqs under concurrent appends, and pages them', async () => {
      const before = (await store.history()).at(-1)?.seq ?? 0;
      const writers = [store, open(), open()];
      const appended = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          nth(writers, i % 3).appendHistory({
            at: 1_800_000_000_000 + i,
            kind: 'decision',
            message: `event ${i}`,
            data: { i },
          }),
        ),
      );
      const seqs = appended.map((e) => e.seq);
      assert.equal(new Set(seqs).size, 20);
      assert.ok(seqs.every((s) => s > before));
      const all = await store.history({ afterSeq: before });
      assert.equal(all.length, 20);
      for (let i = 1; i < all.length; i++) assert.ok(nth(all, i).seq > nth(all, i - 1).seq);
      assert.deepEqual(
        [...all].sort((a, b) => a.seq - b.seq),
        [...appended].sort((a, b) => a.seq - b.seq),
      );
      const page1 = await store.history({ afterSeq: before, limit: 7 });
      const page2 = await store.history({ afterSeq: nth(page1, -1).seq, limit: 7 });
      const page3 = await store.history({ afterSeq: nth(page2, -1).seq, limit: 7 });
      assert.deepEqual([page1.length, page2.length, page3.length], [7, 7, 6]);
      assert.deepEqual([...page1, ...page2, ...page3], all);
      assert.deepEqual(await store.history({ afterSeq: nth(all, -1).seq }), []);
      assert.deepEqual(await store.history({ limit: 0 }), []);
      const next = await store.appendHistory({ at: 1, kind: 'warning', message: 'later' });
      assert.ok(next.seq > nth(all, -1).seq);
    });

    it('keeps everything for a new instance (an operator restart)', async () => {
      const [id, m] = [fresh('r'), fresh('m')];
      const first = open();
      await first.putMachine(machineFixture(m));
      await first.createRollout(rolloutFixture(id));
      await first.recordStart(startOf(id, m, 1_800_000_003_000), inFlight(1_800_000_003_000));
      await first.setHold(m, { reason: 'kept', until: 1_900_000_000_000 });
      await first.putBlock({ digest: `sha256:${m}`, reason: 'kept', by: 'ops', at: 1 });
      const event = await first.appendHistory({
        at: 5,
        kind: 'rollout-created',
        rollout: id,
        message: 'x',
      });
      const seenBefore = await first.read();
      await close(first);
      const second = open();
      assert.deepEqual(await second.read(), seenBefore);
      assert.deepEqual(await second.history({ afterSeq: event.seq - 1 }), [event]);
      await rejectsWithCode(
        second.recordStart(startOf(id, m, 1_800_000_004_000), inFlight(1_800_000_004_000)),
        ErrorCode.AlreadyStarted,
      );
    });

    it('hands out copies: changing a value read or passed in does not change the store', async () => {
      const id = fresh('r');
      const rollout = { ...rolloutFixture(id), machines: {} as Record<string, MachineProgress> };
      await store.createRollout(rollout);
      rollout.machines['x'] = { phase: 'Failed' };
      const read = nth(
        (await store.read()).rollouts.filter((r) => r.id === id),
        0,
      );
      (read.machines as Record<string, MachineProgress>)['y'] = { phase: 'Failed' };
      assert.deepEqual((await store.read()).rollouts.find((r) => r.id === id)?.machines, {});
    });
  });
}
