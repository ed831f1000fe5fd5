// SPDX-License-Identifier: Apache-2.0
// The API plans on what the loop saw — agents and health gates alike — so `GET /v1/plan` agrees
// with the next pass instead of calling a passing gate "not checked yet".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plan } from '../../core/rollout/plan.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { MemoryObservationBook, observingGateProbe } from './observations.ts';
import { snapshotOf } from './snapshot.ts';

describe('the API’s view of gates', () => {
  it('records each gate result the loop’s probe returns, and plans with it', async () => {
    const book = new MemoryObservationBook();
    const gate = { kind: 'gate' as const, name: 'api', url: 'http://127.0.0.1:1/healthz' };
    const probe = observingGateProbe(
      { check: () => Promise.resolve({ ok: true, message: 'HTTP 200' }) },
      book,
    );
    assert.deepEqual(book.gates(), {});
    await probe.check(gate);
    assert.deepEqual(book.gates(), { api: { ok: true, message: 'HTTP 200' } });
    const store = new MemoryOperatorStore();
    await store.putMachine({
      id: 'w-1',
      endpoint: 'https://127.0.0.1:1',
      role: 'worker',
      pool: 'workers',
      labels: {},
    });
    await store.createRollout({
      id: 'r1',
      pool: 'workers',
      target: { version: '1.1.0', digest: `sha256:${'b'.repeat(64)}` },
      state: 'Active',
      createdAt: 0,
      machines: {},
    });
    book.set('w-1', {
      at: 1,
      status: {
        node: 'w-1',
        role: 'worker',
        bootId: 'b',
        bootedSlot: 'A',
        version: '1.0.0',
        slots: [
          {
            slot: 'A',
            status: 'ready',
            version: '1.0.0',
            digest: `sha256:${'a'.repeat(64)}`,
            generation: 1,
          },
        ],
        boot: { bootloader: 'grub', committed: 'A', oneShot: null, entries: [] },
        phase: 'Idle',
        operation: null,
        last: null,
      },
    });
    const fleet = { pools: [{ name: 'workers', policies: [gate] }], fleetPolicies: [] };
    const decided = plan(snapshotOf(await store.read(), book, fleet), 10);
    assert.deepEqual(
      decided.decisions.map((d) => [d.machine, d.action]),
      [['w-1', 'start']],
    );
  });
});
