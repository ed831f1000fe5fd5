// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { machine } from './fixtures.test.ts';
import { compareOrder, sortOrder } from './machine-order.ts';
import { orderHash } from './wariness.ts';

/** Two ids whose order hashes collide in rollout `r1` (found by search once). */
const COLLIDING = ['m-936389', 'm-1276190'] as const;

const poolArb = fc
  .array(
    fc.record({
      id: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...COLLIDING)),
      controlPlane: fc.boolean(),
      rank: fc.integer({ min: 0, max: 5 }),
    }),
    { maxLength: 80 },
  )
  // Ids are unique in a snapshot.
  .map((specs) => [...new Map(specs.map((s) => [s.id, s])).values()]);

describe('machine order', () => {
  it('sorts by packed keys exactly as by comparing pairs', () => {
    fc.assert(
      fc.property(poolArb, fc.constantFrom('r1', 'r2'), (specs, rolloutId) => {
        const pool = specs.map((s) =>
          machine(s.id, { role: s.controlPlane ? 'control-plane' : 'worker' }),
        );
        const ranks = Int32Array.from(specs, (s) => s.rank);
        assert.deepEqual(sortOrder(pool, ranks, rolloutId), compareOrder(pool, ranks, rolloutId));
      }),
    );
  });

  it('puts machines whose hashes collide in id order', () => {
    const [a, b] = COLLIDING;
    assert.equal(orderHash('r1', a), orderHash('r1', b));
    const pool = [machine('x'), machine(a), machine('y'), machine(b), machine('z')];
    const ranks = new Int32Array(pool.length);
    const order = Array.from(sortOrder(pool, ranks, 'r1'), (i) => pool[i]?.id);
    assert.ok(order.indexOf(b) === order.indexOf(a) - 1, `${b} (< ${a}) right before it`);
    assert.deepEqual(sortOrder(pool, ranks, 'r1'), compareOrder(pool, ranks, 'r1'));
  });

  it('compares pairs when the packed keys would not fit in 53 bits', () => {
    // 2 100 groups (one zone each) need 12 bits, 2 100 indexes 12 more: 56 with the hash.
    const pool = Array.from({ length: 2_100 }, (_, i) => machine(`m${i}`));
    const ranks = Int32Array.from(pool, (_, i) => i);
    assert.deepEqual(sortOrder(pool, ranks, 'r1'), compareOrder(pool, ranks, 'r1'));
  });
});
