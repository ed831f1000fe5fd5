// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link ClusterLease} must do (docs/adr/0004 §5), run against the fake and against
 * real etcd: one holder at a time, idempotent acquire, release of our key only, expiry of a dead
 * holder, and a lease extended for a reboot that outlives the normal TTL and is resumed after it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../protocol/index.ts';
import type { ClusterLease } from '../agent/ports/cluster-lease.ts';
import { eventually } from '../platform/process/managed-process.ts';
import { rejectsWithCode } from './registry-conformance.ts';

/** A lease backend the suite can run against; all agents opened share one store. */
export interface ClusterLeaseTarget {
  readonly name: string;
  /** The TTL agents are opened with (keep it short on real etcd). */
  readonly ttlSeconds: number;
  /** The reboot TTL agents are opened with; must exceed `2 * ttlSeconds + 1`. */
  readonly rebootTtlSeconds: number;
  start(): Promise<{
    open(holder: string): ClusterLease;
    /** Let `seconds` pass (real time on etcd, the fake clock otherwise). */
    elapse(seconds: number): Promise<void>;
    /** Make the store drop the key and its lease, as etcd does after a TTL without renewals. */
    loseKey(): Promise<void>;
    stop(): Promise<void>;
  }>;
}

let opCounter = 0;
const newOp = (): string => `op-${process.pid}-${++opCounter}`;

export function clusterLeaseConformance(target: ClusterLeaseTarget): void {
  describe(`cluster lease conformance: ${target.name}`, () => {
    let env: Awaited<ReturnType<ClusterLeaseTarget['start']>>;
    const opened: ClusterLease[] = [];
    const open = (holder: string): ClusterLease => {
      const lease = env.open(holder);
      opened.push(lease);
      return lease;
    };
    before(async () => {
      env = await target.start();
    });
    after(async () => {
      for (const l of opened) await l.close();
      await env.stop();
    });

    it('gives the lease to one of two contending holders and names it to the other', async () => {
      const [a, b] = [open('cp-a'), open('cp-b')];
      const [opA, opB] = [newOp(), newOp()];
      const results = await Promise.allSettled([a.acquire(opA), b.acquire(opB)]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const loser = results.find((r) => r.status === 'rejected');
      assert.ok(loser !== undefined && isMoltError(loser.reason));
      assert.equal(loser.reason.code, ErrorCode.LeaseHeld);
      const winner = await a.holder();
      assert.ok(winner !== undefined);
      assert.ok(
        loser.reason.message.includes(winner.holder) &&
          loser.reason.message.includes(winner.operationId),
      );
      await a.release(opA);
      await b.release(opB);
      assert.equal(await a.holder(), undefined);
    });

    it('acquires idempotently for the same operation and refuses another operation of ours', async () => {
      const a = open('cp-a');
      const op = newOp();
      await a.acquire(op);
      await a.acquire(op);
      const h = await a.holder();
      assert.equal(h?.holder, 'cp-a');
      assert.equal(h.operationId, op);
      assert.ok(!Number.isNaN(Date.parse(h.since)));
      await rejectsWithCode(a.acquire(newOp()), ErrorCode.LeaseHeld, op);
      await a.release(op);
    });

    it('releases only its own key', async () => {
      const [a, b] = [open('cp-a'), open('cp-b')];
      const op = newOp();
      await a.acquire(op);
      await b.release(op); // another holder with the same op id: not ours
      await a.release(newOp()); // ours, but another operation
      const other = await b.resume(newOp(), undefined); // not ours: reported, untouched
      assert.ok(other.outcome === 'held');
      assert.equal(other.holder.holder, 'cp-a');
      assert.equal((await b.holder())?.operationId, op);
      await a.release(op);
      await a.release(op); // idempotent
      assert.equal(await b.holder(), undefined);
    });

    it('keeps the lease past its TTL while the holder runs', async () => {
      const [a, b] = [open('cp-a'), open('cp-b')];
      const op = newOp();
      await a.acquire(op);
      await env.elapse(target.ttlSeconds * 2);
      await rejectsWithCode(b.acquire(newOp()), ErrorCode.LeaseHeld, 'cp-a');
      await a.release(op);
    });

    it("lets a dead holder's lease expire at its TTL", async () => {
      const [a, b] = [env.open('cp-a'), open('cp-b')];
      await a.acquire(newOp());
      await a.close(); // the agent dies: nothing renews the lease
      await env.elapse(target.ttlSeconds + 1.5);
      const op = newOp();
      // etcd's lessor checks expiry every 500 ms: allow a little slack past the TTL.
      await eventually(() => b.acquire(op), { timeoutMs: 3_000, intervalMs: 200 });
      assert.equal((await b.holder())?.holder, 'cp-b');
      await b.release(op);
    });

    it('holds an extended lease through a reboot longer than the TTL, then resumes and releases it', async () => {
      const [a, b] = [env.open('cp-a'), open('cp-b')];
      const op = newOp();
      await a.acquire(op);
      const leaseId = await a.extendForReboot(op);
      assert.equal(typeof leaseId, 'string');
      await a.close(); // the reboot
      await env.elapse(target.ttlSeconds * 2 + 1);
      await rejectsWithCode(b.acquire(newOp()), ErrorCode.LeaseHeld, op);
      const again = open('cp-a'); // the agent after the reboot
      assert.deepEqual(await again.resume(op, leaseId), { outcome: 'kept' });
      await again.acquire(op); // AcquireLease re-run after the reboot: already ours
      assert.equal((await b.holder())?.operationId, op);
      await again.release(op);
      const next = newOp();
      await b.acquire(next);
      await b.release(next);
    });

    it('tells its holder when the kept-alive lease is lost, and resume takes the free key again', async () => {
      const [a, b] = [open('cp-a'), open('cp-b')];
      const op = newOp();
      const lost: string[] = [];
      a.onLost((id) => lost.push(id));
      await a.acquire(op);
      await env.loseKey();
      await eventually(
        () => {
          assert.equal(lost.length, 1);
          return Promise.resolve();
        },
        { timeoutMs: (target.ttlSeconds + 2) * 1000, intervalMs: 100 },
      );
      assert.deepEqual(await a.resume(op, undefined), { outcome: 'retaken' });
      assert.equal((await b.holder())?.operationId, op);
      await rejectsWithCode(b.acquire(newOp()), ErrorCode.LeaseHeld, op);
      await a.release(op);
    });

    it('reports a key taken by another holder after a loss instead of taking it', async () => {
      const [a, b] = [open('cp-a'), open('cp-b')];
      const [opA, opB] = [newOp(), newOp()];
      await a.acquire(opA);
      await env.loseKey();
      await eventually(() => b.acquire(opB), { timeoutMs: 3_000, intervalMs: 100 });
      const seen = await a.resume(opA, undefined);
      assert.ok(seen.outcome === 'held');
      assert.equal(seen.holder.operationId, opB);
      assert.equal((await a.holder())?.holder, 'cp-b');
      await b.release(opB);
    });
  });
}
