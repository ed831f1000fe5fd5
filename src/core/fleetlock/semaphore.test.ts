// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isMoltError } from '../errors.ts';
import {
  expiryOf,
  freeSlots,
  holds,
  lock,
  newSemaphore,
  recover,
  unlock,
  withSlots,
  type Semaphore,
} from './semaphore.ts';

type Op =
  | { readonly op: 'lock'; readonly id: string }
  | { readonly op: 'unlock'; readonly id: string }
  | { readonly op: 'slots'; readonly n: number };

// A few ids, so that locks and unlocks of the same id collide often; 'A' and 'a' differ.
const id = fc.constantFrom('a', 'A', 'b', 'c', 'd', 'e', 'node-1', '8d3f0c6a2b1e4f5a');
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: id.map((i) => ({ op: 'lock' as const, id: i })) },
  { weight: 3, arbitrary: id.map((i) => ({ op: 'unlock' as const, id: i })) },
  { weight: 1, arbitrary: fc.nat(5).map((n) => ({ op: 'slots' as const, n })) },
);
const semaphore: fc.Arbitrary<Semaphore> = fc
  .tuple(fc.nat(5), fc.array(op, { maxLength: 30 }))
  .map(([slots, ops]) => ops.reduce(apply, newSemaphore(slots)));

function apply(sem: Semaphore, o: Op): Semaphore {
  switch (o.op) {
    case 'lock':
      return lock(sem, o.id).sem;
    case 'unlock':
      return unlock(sem, o.id).sem;
    case 'slots':
      return withSlots(sem, o.n);
  }
}

describe('fleetlock semaphore', () => {
  it('never holds a duplicate and never grows past its slots, whatever the sequence', () => {
    fc.assert(
      fc.property(fc.nat(5), fc.array(op, { maxLength: 60 }), (slots, ops) => {
        let sem = newSemaphore(slots);
        for (const o of ops) {
          const next = apply(sem, o);
          assert.equal(new Set(next.holders).size, next.holders.length, 'duplicate holder');
          // Over the slot count only by lowering it: the holders never grow while over.
          if (next.holders.length > next.slots)
            assert.ok(next.holders.length <= sem.holders.length, `grew past slots: ${o.op}`);
          sem = next;
        }
      }),
    );
  });

  it('grants a lock exactly when the id holds one already or a slot is free', () => {
    fc.assert(
      fc.property(semaphore, id, (sem, i) => {
        const r = lock(sem, i);
        const expected = holds(sem, i) || sem.holders.length < sem.slots;
        assert.equal(r.ok, expected);
        assert.equal(holds(r.sem, i), expected);
        assert.equal(r.reason, holds(sem, i) ? 'AlreadyHeld' : expected ? 'Acquired' : 'Full');
        // Nobody else's slot is touched.
        assert.deepEqual(
          r.sem.holders.filter((h) => h !== i),
          sem.holders.filter((h) => h !== i),
        );
      }),
    );
  });

  it('is recursive: locking twice is locking once, and returns the same object', () => {
    fc.assert(
      fc.property(semaphore, id, (sem, i) => {
        const once = lock(sem, i);
        const twice = lock(once.sem, i);
        assert.equal(twice.sem, once.sem);
        assert.equal(twice.ok, once.ok);
        if (once.ok) assert.equal(twice.reason, 'AlreadyHeld');
      }),
    );
  });

  it('is idempotent on unlock: releasing nothing succeeds and changes nothing', () => {
    fc.assert(
      fc.property(semaphore, id, (sem, i) => {
        const once = unlock(sem, i);
        assert.equal(once.released, holds(sem, i));
        assert.ok(!holds(once.sem, i));
        const twice = unlock(once.sem, i);
        assert.equal(twice.released, false);
        assert.equal(twice.sem, once.sem);
      }),
    );
  });

  it('frees the slot on unlock, so the lock a full semaphore refused then succeeds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), (slots) => {
        let sem = newSemaphore(slots);
        for (let n = 0; n < slots; n++) sem = lock(sem, `n${n}`).sem;
        assert.equal(lock(sem, 'late').reason, 'Full');
        sem = unlock(sem, 'n0').sem;
        const r = lock(sem, 'late');
        assert.equal(r.reason, 'Acquired');
        assert.equal(freeSlots(r.sem), 0);
      }),
    );
  });

  it('keeps existing holders when the slots shrink, and refuses new ones until enough left', () => {
    let sem = newSemaphore(3);
    for (const i of ['a', 'b', 'c']) sem = lock(sem, i).sem;
    sem = withSlots(sem, 1);
    assert.deepEqual(sem.holders, ['a', 'b', 'c']);
    assert.equal(freeSlots(sem), 0);
    assert.equal(lock(sem, 'd').reason, 'Full');
    assert.equal(lock(sem, 'b').reason, 'AlreadyHeld');
    sem = unlock(unlock(sem, 'a').sem, 'b').sem;
    assert.equal(lock(sem, 'd').reason, 'Full');
    sem = unlock(sem, 'c').sem;
    assert.deepEqual(lock(sem, 'd').sem.holders, ['d']);
  });

  it('returns the same object when the slot count does not change', () => {
    fc.assert(
      fc.property(semaphore, (sem) => {
        assert.equal(withSlots(sem, sem.slots), sem);
      }),
    );
  });

  it('treats ids case-sensitively', () => {
    const sem = lock(newSemaphore(2), 'abc').sem;
    assert.equal(lock(sem, 'ABC').reason, 'Acquired');
    assert.equal(unlock(sem, 'ABC').released, false);
  });

  it('refuses a slot count that is negative or not whole', () => {
    for (const bad of [-1, 1.5, Number.NaN, Infinity])
      assert.throws(
        () => newSemaphore(bad),
        (e: unknown) => isMoltError(e, 'MOLT_POLICY_INVALID'),
      );
    assert.throws(
      () => withSlots(newSemaphore(1), -2),
      (e: unknown) => isMoltError(e),
    );
  });

  it('with 0 slots nobody may lock, and unlock still succeeds', () => {
    const sem = newSemaphore(0);
    assert.equal(lock(sem, 'a').ok, false);
    assert.equal(unlock(sem, 'a').released, false);
  });

  describe('slot expiry (a dead holder must not hold its group for ever)', () => {
    const ttl = 60_000;
    const timed: fc.Arbitrary<Semaphore> = fc
      .tuple(
        fc.nat(5),
        fc.array(fc.tuple(id, fc.integer({ min: 0, max: 200_000 })), { maxLength: 20 }),
      )
      .map(([slots, locks]) =>
        locks.reduce((s, [i, at]) => lock(s, i, at).sem, newSemaphore(slots)),
      );

    it('gives a slot its expiry, and renews it when the holder locks again', () => {
      const first = lock(newSemaphore(1), 'a', 1_000);
      assert.equal(first.reason, 'Acquired');
      assert.equal(expiryOf(first.sem, 'a'), 1_000);
      const renewed = lock(first.sem, 'a', 5_000);
      assert.equal(renewed.reason, 'AlreadyHeld');
      assert.equal(expiryOf(renewed.sem, 'a'), 5_000);
      assert.notEqual(renewed.sem, first.sem, 'a renewal is a write');
      assert.equal(
        lock(renewed.sem, 'a', 5_000).sem,
        renewed.sem,
        'the same expiry writes nothing',
      );
      assert.equal(expiryOf(unlock(renewed.sem, 'a').sem, 'a'), undefined);
    });

    it('frees an expired slot, so a dead holder no longer blocks the group', () => {
      const held = lock(newSemaphore(1), 'dead', 10_000).sem;
      assert.equal(lock(held, 'next', 20_000).reason, 'Full');
      assert.deepEqual(recover(held, 9_999, ttl).freed, []);
      const r = recover(held, 10_000, ttl);
      assert.deepEqual(r.freed, ['dead']);
      assert.equal(lock(r.sem, 'next', 20_000).reason, 'Acquired');
    });

    it('after recovery, every holder expires in (now, now + ttl], and only expired ones left', () => {
      fc.assert(
        fc.property(timed, fc.integer({ min: 0, max: 200_000 }), (sem, now) => {
          const r = recover(sem, now, ttl);
          for (const h of sem.holders) {
            const at = expiryOf(sem, h) ?? Infinity;
            assert.equal(r.freed.includes(h), at <= now, h);
          }
          for (const h of r.sem.holders) {
            const at = expiryOf(r.sem, h) ?? -1;
            assert.ok(at > now && at <= now + ttl, `${h} expires at ${at}`);
          }
          assert.equal(recover(r.sem, now, ttl).sem, r.sem, 'recovering twice changes nothing');
        }),
      );
    });

    it('gives a holder recorded without an expiry one, instead of keeping it for ever', () => {
      const legacy: Semaphore = { slots: 1, holders: ['old'] };
      const r = recover(legacy, 1_000, ttl);
      assert.deepEqual(r.freed, []);
      assert.equal(expiryOf(r.sem, 'old'), 1_000 + ttl);
      assert.deepEqual(recover(r.sem, 1_000 + ttl, ttl).freed, ['old']);
    });

    it('never reads an expiry off Object.prototype', () => {
      const sem = lock(newSemaphore(2), 'constructor', 5).sem;
      assert.equal(expiryOf(sem, 'toString'), undefined);
      assert.equal(expiryOf(sem, 'constructor'), 5);
      assert.deepEqual(recover(sem, 5, ttl).freed, ['constructor']);
    });
  });
});
