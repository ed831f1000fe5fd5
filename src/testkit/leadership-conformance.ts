// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link Leadership} must do (docs/adr/0005 §4), run against the memory adapter, real
 * etcd and a real Kubernetes Lease: one leader among campaigners, named by `leader()`; a prompt
 * handover on resign; a live leader keeps its claim past the TTL; a dead one loses it within TTL +
 * slack; a leader whose claim is taken away is told through `onLost`; a closed campaigner stops.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../protocol/index.ts';
import type { Leadership } from '../operator/ports/leadership.ts';
import { eventually } from '../platform/process/managed-process.ts';
import { rejectsWithCode } from './registry-conformance.ts';

/** A leadership backend the suite can run against; all instances opened share it. */
export interface LeadershipTarget {
  readonly name: string;
  /** The TTL instances are opened with (keep it short on real etcd). */
  readonly ttlSeconds: number;
  start(): Promise<{
    open(id: string): Leadership;
    /** Let `seconds` pass (real time on etcd, a hand-moved clock in memory). */
    elapse(seconds: number): Promise<void>;
    /** Take the current claim away, as etcd does when the leader's lease is revoked. */
    loseClaim(): Promise<void>;
    stop(): Promise<void>;
  }>;
}

/** A campaign whose outcome the test can look at without awaiting it. */
interface Tracked {
  readonly promise: Promise<void>;
  settled(): 'pending' | 'led' | 'rejected';
}

function track(l: Leadership): Tracked {
  let state: 'pending' | 'led' | 'rejected' = 'pending';
  const promise = l.campaign().then(
    () => {
      state = 'led';
    },
    (e: unknown) => {
      state = 'rejected';
      throw e;
    },
  );
  promise.catch(() => undefined); // looked at through settled() or awaited by the test
  return { promise, settled: () => state };
}

export function leadershipConformance(target: LeadershipTarget): void {
  describe(`leadership conformance: ${target.name}`, () => {
    let env: Awaited<ReturnType<LeadershipTarget['start']>>;
    const opened: Leadership[] = [];
    const open = (id: string): Leadership => {
      const l = env.open(id);
      opened.push(l);
      return l;
    };
    /** Within a few polls (etcd) or at once (memory). */
    const soon = { timeoutMs: 3_000, intervalMs: 50 };
    const leads = (l: Leadership): Promise<void> =>
      eventually(() => {
        assert.ok(l.isLeader(), `${l.id} should lead`);
        return Promise.resolve();
      }, soon);
    before(async () => {
      env = await target.start();
    });
    after(async () => {
      for (const l of opened) await l.close();
      await env.stop();
    });

    it('gives leadership to exactly one of two campaigners, and both name it', async () => {
      const [a, b] = [open('op-a'), open('op-b')];
      assert.equal(await a.leader(), undefined);
      const [ca, cb] = [track(a), track(b)];
      await Promise.race([ca.promise, cb.promise]);
      const [winner, loser, lost] = ca.settled() === 'led' ? [a, b, cb] : [b, a, ca];
      assert.ok(winner.isLeader());
      assert.ok(!loser.isLeader());
      assert.equal(await a.leader(), winner.id);
      assert.equal(await b.leader(), winner.id);
      await winner.campaign(); // already leading: at once
      assert.equal(lost.settled(), 'pending');
      await winner.resign();
      await lost.promise;
      await loser.resign();
    });

    it('hands over at once when the leader resigns', async () => {
      const [a, b] = [open('op-a'), open('op-b')];
      await a.campaign();
      const cb = track(b);
      await env.elapse(0.2);
      assert.equal(cb.settled(), 'pending');
      await a.resign();
      assert.ok(!a.isLeader());
      await cb.promise;
      assert.ok(b.isLeader());
      assert.equal(await a.leader(), 'op-b');
      await a.resign(); // not leading: leaves op-b alone
      assert.equal(await b.leader(), 'op-b');
      await b.resign();
      assert.equal(await b.leader(), undefined);
    });

    it('keeps leading past its TTL while it lives', async () => {
      const [a, b] = [open('op-a'), open('op-b')];
      await a.campaign();
      const cb = track(b);
      await env.elapse(target.ttlSeconds * 2);
      assert.ok(a.isLeader());
      assert.equal(cb.settled(), 'pending');
      assert.equal(await b.leader(), 'op-a');
      await a.resign();
      await cb.promise;
      await b.resign();
    });

    it('lets another lead within TTL + slack after the leader dies', async () => {
      const a = env.open('op-a');
      const b = open('op-b');
      await a.campaign();
      const cb = track(b);
      await a.close(); // dies: stops renewing without resigning
      await env.elapse(target.ttlSeconds / 2);
      assert.equal(cb.settled(), 'pending', 'a dead leader keeps its claim until the TTL');
      const started = performance.now();
      await env.elapse(target.ttlSeconds / 2 + 0.5);
      // etcd's lessor checks expiry every 500 ms, and the campaigner polls: some slack.
      await eventually(() => {
        assert.equal(cb.settled(), 'led');
        return Promise.resolve();
      }, soon);
      assert.ok(performance.now() - started < (target.ttlSeconds / 2 + 0.5 + 3) * 1000);
      assert.equal(await b.leader(), 'op-b');
      await b.resign();
    });

    it('tells the leader when its claim is lost, and another takes over', async () => {
      const [a, b] = [open('op-a'), open('op-b')];
      let lost = 0;
      a.onLost(() => {
        lost++;
      });
      await a.campaign();
      const cb = track(b);
      await env.loseClaim();
      await eventually(
        () => {
          assert.equal(lost, 1);
          return Promise.resolve();
        },
        {
          timeoutMs: (target.ttlSeconds + 2) * 1000,
          intervalMs: 50,
        },
      );
      assert.ok(!a.isLeader());
      await cb.promise;
      await leads(b);
      assert.equal(await a.leader(), 'op-b');
      const ca = track(a); // the loser may campaign again, and waits
      await env.elapse(0.2);
      assert.equal(ca.settled(), 'pending');
      await b.resign();
      await ca.promise;
      assert.equal(lost, 1);
      await a.resign();
    });

    it('rejects a pending campaign, and any later one, once closed', async () => {
      const [a, b] = [open('op-a'), env.open('op-b')];
      await a.campaign();
      const cb = track(b);
      await b.close();
      await rejectsWithCode(cb.promise, ErrorCode.NotLeader);
      await rejectsWithCode(b.campaign(), ErrorCode.NotLeader);
      assert.ok(!b.isLeader());
      assert.equal(await a.leader(), 'op-a');
      await a.resign();
    });
  });
}
