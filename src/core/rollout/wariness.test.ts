// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { machine } from './fixtures.test.ts';
import { fnv1a, hashWariness, orderHash, warinessOf } from './wariness.ts';

describe('wariness and order hashes', () => {
  it('is FNV-1a 32-bit (reference vectors)', () => {
    assert.equal(fnv1a(''), 0x811c9dc5);
    assert.equal(fnv1a('a'), 0xe40c292c);
    assert.equal(fnv1a('foobar'), 0xbf9cf968);
  });

  it('maps every id into [0, 1), the same way every time', () => {
    fc.assert(
      fc.property(fc.string(), (id) => {
        const w = hashWariness(id);
        assert.ok(w >= 0 && w < 1);
        assert.equal(hashWariness(id), w);
      }),
    );
  });

  it('prefers a machine’s own wariness', () => {
    assert.equal(warinessOf(machine('a', { wariness: 0.25 })), 0.25);
    assert.equal(warinessOf(machine('a')), hashWariness('a'));
  });

  it('hashes (rollout, machine) as FNV-1a of the joined key', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (r, m) => {
        assert.equal(orderHash(r, m), fnv1a(`${r}\u0000${m}`));
      }),
    );
  });

  it('orders machines differently in different rollouts', () => {
    const ids = Array.from({ length: 20 }, (_, i) => `m${i}`);
    const order = (r: string): string[] =>
      [...ids].sort((a, b) => orderHash(r, a) - orderHash(r, b));
    assert.notDeepEqual(order('r1'), order('r2'));
    assert.deepEqual(order('r1'), order('r1'));
  });
});
