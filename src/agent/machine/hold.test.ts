// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { createFsHoldStore, holdPath } from '../adapters/fs-hold/index.ts';
import { createFakeClock } from '../ports/clock.fake.ts';
import { createMemoryHoldStore } from '../ports/hold-store.fake.ts';
import { holdOf, loadHolds, requireNotHeld } from './hold.ts';

const T0 = Date.UTC(2026, 10, 22, 12);
const alice = { name: 'alice', role: 'admin' as const };

describe('the agent’s hold', () => {
  it('ends `for` after the agent’s own now, and keeps who set it and for whom', () => {
    assert.deepEqual(
      holdOf(
        { reason: 'audit', for: '2h', onBehalfOf: 'bob' },
        { name: 'op', role: 'operator' },
        T0,
      ),
      {
        reason: 'audit',
        until: '2026-11-22T14:00:00.000Z',
        setBy: { name: 'op', role: 'operator' },
        onBehalfOf: 'bob',
        setAt: '2026-11-22T12:00:00.000Z',
      },
    );
  });

  it('refuses a hold that would end before now (MOLT_BAD_INPUT): it would hold nothing', () => {
    assert.throws(
      () => holdOf({ reason: 'audit', until: '2026-11-22T11:59:00Z' }, alice, T0),
      (e) => isMoltError(e, ErrorCode.BadInput) && /not in the future/.test(e.message),
    );
  });

  it('tells how to release an operator’s hold through the operator, a direct one on the agent', () => {
    const direct = holdOf({ reason: 'bios', for: '1h' }, alice, T0);
    const pushed = holdOf(
      { reason: 'disk swap', for: '1h', onBehalfOf: 'carol' },
      { name: 'operator', role: 'operator' },
      T0,
    );
    const refusal = (hold: typeof direct): { message: string; hint: string } => {
      try {
        requireNotHeld(hold, { kind: 'upgrade' }, { node: 'w-1', now: T0 });
      } catch (e) {
        assert.ok(isMoltError(e, ErrorCode.MachineHeld));
        assert.deepEqual(e.details, { hold });
        return { message: e.message, hint: e.hint ?? '' };
      }
      assert.fail('not refused');
    };
    assert.equal(
      refusal(direct).message,
      'w-1 is held until 2026-11-22T13:00:00.000Z by alice: bios',
    );
    assert.match(refusal(direct).hint, /`molt node release`/);
    assert.equal(
      refusal(pushed).message,
      'w-1 is held until 2026-11-22T13:00:00.000Z by carol: disk swap',
    );
    assert.match(refusal(pushed).hint, /`molt machine release w-1`/);
  });

  it('is persisted in the state directory and found again by the next agent (restart, reboot)', async () => {
    const dir = await tempDir('agent-hold');
    try {
      const clock = createFakeClock(T0);
      const first = await loadHolds(createFsHoldStore(dir.path), clock, 'w-1');
      const held = await first.set({ reason: 'disk swap', for: '1h' }, alice);
      const again = await loadHolds(createFsHoldStore(dir.path), clock, 'w-1');
      assert.deepEqual(again.current(), held);
      assert.throws(() => {
        again.check({ kind: 'upgrade' });
      }, /held until/);
      await again.clear();
      const cleared = await loadHolds(createFsHoldStore(dir.path), clock, 'w-1');
      assert.equal(cleared.current(), null);
      assert.doesNotThrow(() => {
        cleared.check({ kind: 'upgrade' });
      });
      await assert.rejects(access(holdPath(dir.path)), /ENOENT/);
    } finally {
      await dir.remove();
    }
  });

  it('applies a set and a clear asked at once in the order asked: the clear wins', async () => {
    const store = createMemoryHoldStore();
    const holds = await loadHolds(store, createFakeClock(T0), 'w-1');
    await Promise.all([holds.set({ reason: 'x', for: '1h' }, alice), holds.clear()]);
    assert.equal(holds.current(), null);
    assert.equal(await store.load(), undefined);
    await holds.clear();
    assert.equal(store.saves.length, 2, 'clearing what is not held writes nothing');
  });
});
