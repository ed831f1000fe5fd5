// SPDX-License-Identifier: Apache-2.0
// The loop's wake: an agent's event starts a pass at once instead of at the end of the period, and
// the machines each pass reads from the store are handed to the watch.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentGateway } from '../ports/agents.ts';
import {
  createMemoryLeadership,
  MemoryLeadershipBackend,
} from '../adapters/memory-leadership/leadership.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import type { ReconcileDeps } from './deps.ts';
import { d10, idle, testSettings, w1 } from '../decide/fixtures.test.ts';
import { startOperatorLoop, type LoopOptions } from './loop.ts';

const gateway: AgentGateway = {
  status: () => Promise.resolve(idle(d10)),
  upgrade: () => Promise.reject(new Error('not in this test')),
  rollback: () => Promise.reject(new Error('not in this test')),
  setHold: () => Promise.reject(new Error('no holds in this test')),
  clearHold: () => Promise.reject(new Error('no holds in this test')),
  close: () => Promise.resolve(),
};

async function loopWithHourlyPasses(o: Partial<LoopOptions> = {}) {
  const store = new MemoryOperatorStore();
  await store.putMachine(w1);
  const tracked: string[][] = [];
  let passes = 0;
  const d: ReconcileDeps = {
    store,
    agents: gateway,
    watch: { track: (ms) => tracked.push(ms.map((m) => m.id)) },
    releases: () => Promise.resolve([]),
    settings: testSettings([{ name: 'workers', channel: 'stable', policies: [] }], 3_600_000),
    now: () => Date.now(),
    log: () => undefined,
  };
  const leadership = createMemoryLeadership(new MemoryLeadershipBackend(), 'op-1');
  const loop = startOperatorLoop(d, leadership, {
    intervalMs: 3_600_000,
    ...o,
    onPass: () => {
      passes++;
    },
  });
  return { loop, store, tracked, passes: () => passes };
}

describe('the operator loop', () => {
  it('runs a pass when woken rather than waiting out its period, and tells the watch the machines', async () => {
    const { loop, store, tracked, passes } = await loopWithHourlyPasses();
    await loop.nextPass();
    assert.equal(passes(), 1);
    await sleep(300);
    assert.equal(passes(), 1, 'an hourly loop does not pass again unwoken');
    await store.putMachine({ ...w1, id: 'w-2' });
    const next = loop.nextPass();
    loop.wake();
    await next;
    assert.equal(passes(), 2);
    assert.deepEqual(tracked, [['w-1'], ['w-1', 'w-2']]);
    await loop.stop();
  });

  it('starts the pass an urgent wake asks for without the minimum gap', async () => {
    const { loop, passes } = await loopWithHourlyPasses({ minGapMs: 3_600_000 });
    await loop.nextPass();
    const next = loop.nextPass();
    loop.wake();
    await sleep(300);
    assert.equal(passes(), 1, 'a plain wake waits out the (hour-long) gap');
    loop.wake({ urgent: true });
    const late = sleep(20_000, 'late', { ref: false });
    assert.equal(await Promise.race([next.then(() => 'ran'), late]), 'ran');
    assert.equal(passes(), 2, 'an urgent one (a machine finished) does not');
    await loop.stop();
  });

  it('folds wakes during a pass into one more pass', async () => {
    const { loop, passes } = await loopWithHourlyPasses();
    await loop.nextPass();
    const next = loop.nextPass();
    loop.wake();
    loop.wake();
    loop.wake();
    await next;
    await sleep(500);
    assert.equal(passes(), 2);
    await loop.stop();
  });
});
