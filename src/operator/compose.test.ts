// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { syncInventory, syncInventoryWhenReachable } from './compose.ts';
import type { MachineRecord, OperatorStore } from './ports/store.ts';
import { MemoryOperatorStore } from './adapters/memory-store/operator-store.ts';

const machine = (id: string, registered?: boolean): MachineRecord => ({
  id,
  endpoint: `https://127.0.0.1:1/${id}`,
  role: 'worker',
  pool: 'workers',
  labels: {},
  ...(registered === true && { registered }),
});

/** A store whose first `n` reads fail with `error`. */
function flaky(store: OperatorStore, n: number, error: Error): OperatorStore {
  let left = n;
  return Object.assign(Object.create(store) as OperatorStore, {
    read: () => (left-- > 0 ? Promise.reject(error) : store.read()),
  });
}

describe('inventory sync', () => {
  it('makes the store match the fleet file but keeps machines registered through the API', async () => {
    const store = new MemoryOperatorStore();
    await store.putMachine(machine('old'));
    await store.putMachine(machine('joined', true));
    await syncInventory(store, [machine('w-1')]);
    assert.deepEqual((await store.read()).machines.map((m) => m.id).sort(), ['joined', 'w-1']);
  });

  it('waits out a store that is not reachable yet instead of failing the operator’s start', async () => {
    const store = new MemoryOperatorStore();
    const away = new MoltError(ErrorCode.EtcdUnhealthy, 'no connection', { retryable: true });
    const logged: string[] = [];
    await syncInventoryWhenReachable(flaky(store, 2, away), [machine('w-1')], (l) =>
      logged.push(l),
    );
    assert.equal(logged.length, 2);
    assert.match(
      logged[0] ?? '',
      /not reachable yet \(MOLT_ETCD_UNHEALTHY: no connection\); retrying in 250 ms/,
    );
    assert.deepEqual(
      (await store.read()).machines.map((m) => m.id),
      ['w-1'],
    );
  });

  it('does not wait out an error that waiting cannot fix', async () => {
    const corrupt = new MoltError(
      ErrorCode.StoreCorrupt,
      'garbage at /molt/v1/operator/machines/x',
    );
    await assert.rejects(
      syncInventoryWhenReachable(flaky(new MemoryOperatorStore(), 1, corrupt), [], () => undefined),
      /garbage/,
    );
  });
});
