// SPDX-License-Identifier: Apache-2.0
// The loop's wake: an agent's event starts a pass at once instead of at the end of the period, and
// the machines each pass reads from the store are handed to the watch. The loop sleeps on a clock the
// tests drive by hand: "no pass happened" is checked once the loop is asleep again, not after a
// wall-clock wait that a slow machine could make vacuous.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { AgentGateway } from '../ports/agents.ts';
import {
  createMemoryLeadership,
  MemoryLeadershipBackend,
} from '../adapters/memory-leadership/leadership.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import type { ReconcileDeps } from './deps.ts';
import { d10, idle, testSettings, w1 } from '../decide/fixtures.test.ts';
import { minGapMs, startOperatorLoop, type LoopOptions } from './loop.ts';

const gateway: AgentGateway = {
  status: () => Promise.resolve(idle(d10)),
  upgrade: () => Promise.reject(new Error('not in this test')),
  apply: () => Promise.reject(new Error('nothing staged in this test')),
  discard: () => Promise.reject(new Error('nothing staged in this test')),
  rollback: () => Promise.reject(new Error('not in this test')),
  setHold: () => Promise.reject(new Error('no holds in this test')),
  clearHold: () => Promise.reject(new Error('no holds in this test')),
  close: () => Promise.resolve(),
};

interface Nap {
  readonly ms: number;
  end(): void;
}

/** A clock for the loop's gaps and naps: each lasts until the test ends it or the loop wakes. */
function handClock() {
  const naps: Nap[] = [];
  let started: (() => void) | undefined;
  const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const nap: Nap = {
        ms,
        end() {
          const i = naps.indexOf(nap);
          if (i !== -1) naps.splice(i, 1);
          resolve();
        },
      };
      naps.push(nap);
      signal.addEventListener(
        'abort',
        () => {
          nap.end();
        },
        { once: true },
      );
      started?.();
    });
  /** The nap the loop is in, once it is in one. */
  const asleep = async (): Promise<Nap> => {
    while (naps[0] === undefined) await new Promise<void>((r) => (started = r));
    return naps[0];
  };
  return { sleep, asleep };
}

async function loopWithHourlyPasses(o: Partial<LoopOptions> = {}) {
  const store = new MemoryOperatorStore();
  await store.putMachine(w1);
  const tracked: string[][] = [];
  const start = Date.now();
  let passes = 0;
  const d: ReconcileDeps = {
    store,
    agents: gateway,
    watch: { track: (ms) => tracked.push(ms.map((m) => m.id)) },
    releases: () => Promise.resolve([]),
    settings: testSettings([{ name: 'workers', channel: 'stable', policies: [] }], 3_600_000),
    // Still: the loop's naps (till the next discovery scan) are then exactly the rest of its period.
    now: () => start,
    log: () => undefined,
  };
  const leadership = createMemoryLeadership(new MemoryLeadershipBackend(), 'op-1');
  const clock = handClock();
  const loop = startOperatorLoop(d, leadership, {
    intervalMs: 3_600_000,
    sleep: clock.sleep,
    ...o,
    onPass: () => {
      passes++;
    },
  });
  return { loop, store, tracked, passes: () => passes, asleep: clock.asleep };
}

/** Deps of a loop with nothing to do on a real clock, its log lines into `lines`. */
function loggingDeps(lines: string[], store: MemoryOperatorStore): ReconcileDeps {
  return {
    store,
    agents: gateway,
    watch: { track: () => undefined },
    releases: () => Promise.resolve([]),
    settings: testSettings([{ name: 'workers', channel: 'stable', policies: [] }], 3_600_000),
    now: () => Date.now(),
    log: (line) => lines.push(line),
  };
}

describe('the operator loop', () => {
  it('runs a pass when woken rather than waiting out its period, and tells the watch the machines', async () => {
    const { loop, store, tracked, passes, asleep } = await loopWithHourlyPasses();
    await loop.nextPass();
    assert.equal(passes(), 1);
    const gap = await asleep();
    assert.equal(gap.ms, minGapMs);
    gap.end();
    assert.equal((await asleep()).ms, 3_600_000 - minGapMs, 'it naps out the rest of the hour');
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
    const { loop, passes, asleep } = await loopWithHourlyPasses({ minGapMs: 3_600_000 });
    await loop.nextPass();
    const next = loop.nextPass();
    const gap = await asleep();
    loop.wake();
    assert.equal(await asleep(), gap, 'a plain wake waits out the (hour-long) gap');
    assert.equal(passes(), 1);
    loop.wake({ urgent: true });
    await next;
    assert.equal(passes(), 2, 'an urgent one (a machine finished) does not');
    await loop.stop();
  });

  it('folds wakes during a pass into one more pass', async () => {
    const { loop, passes, asleep } = await loopWithHourlyPasses();
    await loop.nextPass();
    const next = loop.nextPass();
    loop.wake();
    loop.wake();
    loop.wake();
    (await asleep()).end();
    await next;
    // The gap after it ended by hand: the loop naps for the rest of its hour, no pass left owed.
    const gap = await asleep();
    assert.equal(gap.ms, minGapMs);
    gap.end();
    assert.equal((await asleep()).ms, 3_600_000 - minGapMs);
    assert.equal(passes(), 2);
    await loop.stop();
  });

  it('says when it could not resign at its stop, and stops all the same', async () => {
    const lines: string[] = [];
    const store = new MemoryOperatorStore();
    const leadership = createMemoryLeadership(new MemoryLeadershipBackend(), 'op-1');
    const d = loggingDeps(lines, store);
    const refusing = {
      ...leadership,
      resign: () => Promise.reject(new MoltError(ErrorCode.ResignFailed, 'lost 5 writes')),
    };
    const loop = startOperatorLoop(d, refusing, {
      intervalMs: 3_600_000,
      sleep: handClock().sleep,
    });
    await loop.nextPass();
    await loop.stop();
    assert.ok(
      lines.some((l) => /^could not resign leadership \(op-1\): .*lost 5 writes/.test(l)),
      lines.join('\n'),
    );
  });

  it('never campaigns again without yielding when a claim is won and lost at once', async () => {
    const lines: string[] = [];
    const d = loggingDeps(lines, new MemoryOperatorStore());
    // A claim that is held but stale: campaign() answers at once, isLeader() says no. Past a
    // hundred campaigns in a row the fake stops answering, so a spinning loop ends and is seen.
    let campaigns = 0;
    const stale = {
      ...createMemoryLeadership(new MemoryLeadershipBackend(), 'op-1'),
      campaign: () => (++campaigns > 100 ? new Promise<void>(() => undefined) : Promise.resolve()),
      isLeader: () => false,
    };
    const loop = startOperatorLoop(d, stale, { intervalMs: 3_600_000 });
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(campaigns <= 2, `campaigned ${String(campaigns)} times in 50 ms`);
    assert.ok(
      lines.some((l) => l.startsWith('lost leadership (op-1)')),
      lines.join('\n'),
    );
    await loop.stop();
  });

  it('says in the log when a pass runs long, and whether it still leads', async () => {
    const lines: string[] = [];
    const store = new MemoryOperatorStore();
    const d = loggingDeps(lines, store);
    // The first pass waits on its registry until the test lets it go; later passes do not.
    let release: (() => void) | undefined;
    const stuck: ReconcileDeps = {
      ...d,
      releases: () =>
        release !== undefined
          ? Promise.resolve([])
          : new Promise((resolve) => {
              release = () => {
                resolve([]);
              };
            }),
    };
    const backend = new MemoryLeadershipBackend();
    const leadership = createMemoryLeadership(backend, 'op-1');
    const loop = startOperatorLoop(stuck, leadership, { intervalMs: 3_600_000, slowPassMs: 40 });
    const said = (re: RegExp): Promise<void> =>
      (async () => {
        while (!lines.some((l) => re.test(l))) await new Promise((r) => setTimeout(r, 10));
      })();
    await said(/^reconcile pass still running after \d+ s \(still leading\)$/);
    await leadership.resign();
    await said(/^reconcile pass still running after \d+ s \(no longer leading\)$/);
    release?.();
    await loop.stop();
  });
});
