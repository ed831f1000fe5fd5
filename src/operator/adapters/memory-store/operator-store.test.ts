// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { operatorStoreConformance } from '../../../testkit/operator-store-conformance.ts';
import { rolloutFixture } from '../../../testkit/operator-store-fixtures.ts';
import { MemoryOperatorBackend, MemoryOperatorStore } from './operator-store.ts';

operatorStoreConformance({
  name: 'memory',
  start: () => {
    const backend = new MemoryOperatorBackend();
    return Promise.resolve({
      open: () => new MemoryOperatorStore({ backend }),
      stop: () => Promise.resolve(),
    });
  },
});

describe('MemoryOperatorStore', () => {
  it('re-runs an update whose read was overtaken by an interleaved write, keeping both', async () => {
    const store = new MemoryOperatorStore();
    await store.createRollout(rolloutFixture('r1'));
    let runs = 0;
    store.interleave(async () => {
      await store.updateRollout('r1', (r) => ({ ...r, state: 'Paused' }));
    });
    const result = await store.updateRollout('r1', (r) => {
      runs++;
      return { ...r, machines: { ...r.machines, m1: { phase: 'Succeeded' } } };
    });
    assert.equal(runs, 2);
    assert.equal(result.state, 'Paused');
    assert.deepEqual((await store.read()).rollouts[0], result);
  });

  it('refuses a start when an interleaved start of the same machine commits first', async () => {
    const store = new MemoryOperatorStore();
    await store.createRollout(rolloutFixture('r1'));
    store.interleave(async () => {
      await store.recordStart(
        { machine: 'm1', pool: 'workers', rollout: 'r1', at: 1 },
        {
          phase: 'InFlight',
          startedAt: 1,
        },
      );
    });
    await assert.rejects(
      store.recordStart(
        { machine: 'm1', pool: 'workers', rollout: 'r1', at: 2 },
        {
          phase: 'InFlight',
          startedAt: 2,
        },
      ),
      { code: 'MOLT_ALREADY_STARTED' },
    );
    assert.deepEqual(
      (await store.read()).starts.map((s) => s.at),
      [1],
    );
  });
});
