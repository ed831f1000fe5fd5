// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rolloutFixture } from '../../testkit/operator-store-fixtures.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import type { NewHistoryEvent, OperatorStore } from '../ports/store.ts';
import { recordTransition } from './record.ts';

/** A store that notes each write and history event in `steps`, next to the log's lines. */
function noting(store: OperatorStore, steps: string[]): OperatorStore {
  return {
    read: () => store.read(),
    putMachine: (m) => store.putMachine(m),
    removeMachine: (id) => store.removeMachine(id),
    createRollout: (r) => store.createRollout(r),
    recordStart: (start, progress) => store.recordStart(start, progress),
    pruneStarts: (before) => store.pruneStarts(before),
    setHold: (machine, hold) => store.setHold(machine, hold),
    putBlock: (b) => store.putBlock(b),
    removeBlock: (digest, pool) => store.removeBlock(digest, pool),
    history: (o) => store.history(o),
    historyHead: () => store.historyHead(),
    notifyCursor: (sink) => store.notifyCursor(sink),
    advanceNotifyCursor: (sink, seq) => store.advanceNotifyCursor(sink, seq),
    close: () => store.close(),
    kubeUpgrades: (cluster) => store.kubeUpgrades(cluster),
    createKubeUpgrade: (u) => store.createKubeUpgrade(u),
    updateKubeUpgrade: (cluster, id, change) => store.updateKubeUpgrade(cluster, id, change),
    kubeDesired: (cluster) => store.kubeDesired(cluster),
    putKubeDesired: (record) => store.putKubeDesired(record),
    updateRollout: async (id, change) => {
      const r = await store.updateRollout(id, change);
      steps.push(`write ${id}`);
      return r;
    },
    appendHistory: async (event: NewHistoryEvent) => {
      steps.push(`history ${event.message}`);
      return store.appendHistory(event);
    },
  };
}

describe('recordTransition', () => {
  it('writes the store, then logs, then appends the history event at now', async () => {
    const steps: string[] = [];
    const store = noting(new MemoryOperatorStore(), steps);
    await store.createRollout(rolloutFixture('r1'));
    const recorded = await recordTransition(
      { store, now: () => 42, log: (line) => steps.push(`log ${line}`) },
      {
        write: (s) => s.updateRollout('r1', (r) => ({ ...r, state: 'Paused' })),
        record: {
          log: 'r1 paused',
          event: { kind: 'rollout-state', rollout: 'r1', message: 'paused', data: { x: 1 } },
        },
      },
    );
    assert.equal(recorded, true);
    assert.deepEqual(steps, ['write r1', 'log r1 paused', 'history paused']);
    const [event] = await store.history();
    assert.deepEqual(event, {
      seq: 1,
      at: 42,
      kind: 'rollout-state',
      rollout: 'r1',
      message: 'paused',
      data: { x: 1 },
    });
  });

  it('keeps an event time given, and logs nothing without a log line or a log', async () => {
    const store = new MemoryOperatorStore();
    const lines: string[] = [];
    await recordTransition(
      { store, now: () => 42, log: (line) => lines.push(line) },
      {
        write: (s) => s.setHold('m1', { reason: 'r', until: 9 }),
        record: { event: { at: 7, kind: 'decision', machine: 'm1', message: 'held' } },
      },
    );
    await recordTransition(
      { store, now: () => 42 },
      {
        write: (s) => s.setHold('m1', undefined),
        record: { log: 'released', event: { kind: 'decision', machine: 'm1', message: 'gone' } },
      },
    );
    assert.deepEqual(lines, []);
    assert.deepEqual(
      (await store.history()).map((e) => [e.at, e.message]),
      [
        [7, 'held'],
        [42, 'gone'],
      ],
    );
  });

  it('records nothing when the write found nothing to change', async () => {
    const store = new MemoryOperatorStore();
    const lines: string[] = [];
    const recorded = await recordTransition(
      { store, now: () => 42, log: (line) => lines.push(line) },
      {
        write: () => Promise.resolve(false),
        record: (changed) =>
          changed ? { log: 'changed', event: { kind: 'warning', message: 'changed' } } : undefined,
      },
    );
    assert.equal(recorded, false);
    assert.deepEqual(lines, []);
    assert.deepEqual(await store.history(), []);
  });
});
