// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isBrokenCircuitError } from 'cockatiel';
import { GRPCUnavailableError } from 'etcd3';
import { hostPolicy } from './host-policy.ts';

const down = (): Promise<never> => Promise.reject(new GRPCUnavailableError('member down'));
const never = (): Promise<never> => new Promise<never>(() => undefined);

/** A policy whose member failed three times in a row and is due for a test call. */
async function brokenThenDue(o: Parameters<typeof hostPolicy>[0]): Promise<{
  readonly policy: ReturnType<typeof hostPolicy>;
}> {
  const policy = hostPolicy({ halfOpenAfterMs: 20, ...o });
  for (let i = 0; i < 3; i++) await policy.execute(down).catch(() => undefined);
  await assert.rejects(
    policy.execute(() => 'skipped'),
    isBrokenCircuitError,
  );
  await sleep(30);
  return { policy };
}

describe('the breaker in front of an etcd member', () => {
  it('refuses a call waiting on a test that never answers, in time, and never sends it later', async () => {
    const { policy } = await brokenThenDue({ halfOpenWaitMs: 50, testBoundMs: 60_000 });
    void policy.execute(never); // the test call: the member took it and went silent
    let sent = false;
    const t0 = performance.now();
    await assert.rejects(
      policy.execute(() => {
        sent = true;
        return 'late';
      }),
      isBrokenCircuitError,
    );
    assert.ok(performance.now() - t0 < 1_000, 'refused at the wait bound, not held');
    await sleep(100);
    assert.equal(sent, false);
  });

  it('lets a waiting call through once the test answers in time', async () => {
    const { policy } = await brokenThenDue({ halfOpenWaitMs: 1_000 });
    const test = policy.execute(() => sleep(30).then(() => 'test'));
    assert.equal(await policy.execute(() => 'after'), 'after');
    assert.equal(await test, 'test');
  });

  it('does not fail a call already sent when the wait bound passes: its own deadline bounds it', async () => {
    const { policy } = await brokenThenDue({ halfOpenWaitMs: 60 });
    const test = policy.execute(() => sleep(20).then(() => 'test'));
    // Sent at about 20 ms, answered at about 120 ms: after the 60 ms wait bound.
    assert.equal(await policy.execute(() => sleep(100).then(() => 'written')), 'written');
    assert.equal(await test, 'test');
  });

  it('tries the member afresh once a test has gone unanswered too long', async () => {
    const { policy } = await brokenThenDue({ halfOpenWaitMs: 20, testBoundMs: 80 });
    void policy.execute(never);
    await assert.rejects(
      policy.execute(() => 'held'),
      isBrokenCircuitError,
    );
    await sleep(100);
    assert.equal(await policy.execute(() => 'tried again'), 'tried again');
  });
});
