// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { eventually } from '../../platform/process/managed-process.ts';
import { rolloutFixture } from '../../testkit/operator-store-fixtures.ts';
import {
  MemoryOperatorBackend,
  MemoryOperatorStore,
} from '../adapters/memory-store/operator-store.ts';
import { FakeNotificationSink } from '../ports/notification-sink.fake.ts';
import type { NewHistoryEvent, OperatorStore } from '../ports/store.ts';
import { startNotifications, type Notifications, type NotifyOptions } from './dispatcher.ts';

const event = (message: string, more: Partial<NewHistoryEvent> = {}): NewHistoryEvent => ({
  at: 1_800_000_000_000,
  kind: 'warning',
  message,
  ...more,
});

/** Wait until `check` passes. */
const until = (check: () => void): Promise<void> =>
  eventually(() => {
    check();
    return Promise.resolve();
  });

/** A dispatcher's counters, as the metrics would keep them. */
function observed() {
  const o = { delivered: 0, failed: 0, overflow: 0, backlog: -1, checks: 0 };
  return {
    o,
    observer: {
      delivered: () => {
        o.delivered++;
      },
      dropped: (_: string, reason: 'failed' | 'overflow', n: number) => {
        o[reason] += n;
      },
      backlog: (_: string, n: number) => {
        o.backlog = n;
      },
      checked: () => {
        o.checks++;
      },
    },
  };
}

describe('the notification dispatcher', () => {
  const running: Notifications[] = [];
  const start = (o: Partial<NotifyOptions> & Pick<NotifyOptions, 'store' | 'sinks'>) => {
    const n = startNotifications({ isLeader: () => true, log: () => {}, pollMs: 5, ...o });
    running.push(n);
    return n;
  };
  afterEach(async () => {
    await Promise.all(running.splice(0).map((n) => n.stop()));
  });

  it('starts a new sink at the head, then sends each later event once, in order, with its context', async () => {
    const store = new MemoryOperatorStore();
    await store.appendHistory(event('before the sink existed'));
    await store.createRollout(rolloutFixture('r1'));
    const sink = new FakeNotificationSink('ops');
    const log: string[] = [];
    start({ store, sinks: [sink], log: (l) => log.push(l) });
    await eventually(async () => {
      assert.equal(await store.notifyCursor('ops'), 1);
    });
    await store.appendHistory(
      event('r1 halted', { kind: 'rollout-state', rollout: 'r1', data: { state: 'Halted' } }),
    );
    await store.appendHistory(event('later'));
    await eventually(async () => {
      assert.equal(await store.notifyCursor('ops'), 3);
    });
    assert.deepEqual(
      sink.delivered.map((n) => [n.seq, n.kind, n.pool, n.release?.version, n.by]),
      [
        [2, 'rollout.halted', 'workers', '2.0.0', 'operator'],
        [3, 'warning', undefined, undefined, 'operator'],
      ],
    );
    assert.match(log.join('\n'), /new sink ops starts after history seq 1/);
  });

  it('sends only while leading, and a new leader resumes at the stored cursor without resending', async () => {
    const backend = new MemoryOperatorBackend();
    const store = (): OperatorStore => new MemoryOperatorStore({ backend });
    const leading = { a: true, b: false };
    const [a, b] = [new FakeNotificationSink('ops'), new FakeNotificationSink('ops')];
    start({ store: store(), sinks: [a], isLeader: () => leading.a });
    start({ store: store(), sinks: [b], isLeader: () => leading.b });
    await eventually(async () => {
      assert.equal(await store().notifyCursor('ops'), 0);
    });
    await store().appendHistory(event('one'));
    await until(() => {
      assert.equal(a.delivered.length, 1);
    });
    Object.assign(leading, { a: false, b: true }); // failover
    await store().appendHistory(event('two'));
    await until(() => {
      assert.equal(b.delivered.length, 1);
    });
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      a.delivered.map((n) => n.message),
      ['one'],
    );
    assert.deepEqual(
      b.delivered.map((n) => n.message),
      ['two'],
    );
  });

  it('counts each look at the history, whether or not it found events', async () => {
    const store = new MemoryOperatorStore();
    await store.advanceNotifyCursor('ops', 0);
    const { o, observer } = observed();
    start({ store, sinks: [new FakeNotificationSink('ops')], observer });
    await until(() => {
      assert.ok(o.checks >= 3, 'an idle sink looks again at every poll');
    });
    assert.equal(o.delivered, 0);
  });

  it('drops an event its sink gave up on (counted, logged) and goes on with the next', async () => {
    const store = new MemoryOperatorStore();
    await store.advanceNotifyCursor('ops', 0);
    const sink = new FakeNotificationSink('ops');
    sink.failNext = 1;
    const { o, observer } = observed();
    const log: string[] = [];
    start({ store, sinks: [sink], observer, log: (l) => log.push(l) });
    const lost = await store.appendHistory(event('lost'));
    await store.appendHistory(event('kept'));
    await eventually(async () => {
      assert.equal(await store.notifyCursor('ops'), 2);
    });
    assert.deepEqual(
      sink.delivered.map((n) => n.message),
      ['kept'],
    );
    const { checks, ...counts } = o;
    assert.deepEqual(counts, { delivered: 1, failed: 1, overflow: 0, backlog: 0 });
    assert.ok(checks > 0, 'its looks at the history are counted');
    assert.match(
      log.join('\n'),
      new RegExp(`dropped warning molt-${String(lost.seq)}-\\w+ for sink ops: ops: refused`),
    );
  });

  it('skips events the sink does not want, and moves its cursor past them in one write', async () => {
    const writes: number[] = [];
    class CountingStore extends MemoryOperatorStore {
      override advanceNotifyCursor(sink: string, seq: number) {
        writes.push(seq);
        return super.advanceNotifyCursor(sink, seq);
      }
    }
    const store = new CountingStore();
    await store.advanceNotifyCursor('halts', 0);
    const sink = new FakeNotificationSink('halts', (k) => k === 'rollout.halted');
    start({ store, sinks: [sink] });
    await store.appendHistory(event('noise'));
    await store.appendHistory(event('halt', { kind: 'rollout-state', data: { state: 'Halted' } }));
    await store.appendHistory(event('more noise'));
    await eventually(async () => {
      assert.equal(await store.notifyCursor('halts'), 3);
    });
    assert.deepEqual(
      sink.attempts.map((n) => n.message),
      ['halt'],
    );
    for (let i = 0; i < 5; i++) await store.appendHistory(event(`noise ${String(i)}`));
    await eventually(async () => {
      assert.equal(await store.notifyCursor('halts'), 8);
    });
    assert.deepEqual(writes.slice(-1), [8], 'five unwanted events, one write');
    assert.ok(writes.filter((w) => w > 3).length === 1, writes.join(' '));
  });

  it('keeps at most maxBacklog events for a sink that is stuck: the oldest are dropped and counted', async () => {
    const store = new MemoryOperatorStore();
    await store.advanceNotifyCursor('slow', 0);
    const sink = new FakeNotificationSink('slow');
    let unstall = (): void => {};
    sink.stall = new Promise((resolve) => (unstall = resolve));
    const { o, observer } = observed();
    const log: string[] = [];
    start({ store, sinks: [sink], observer, maxBacklog: 5, log: (l) => log.push(l) });
    await store.appendHistory(event('e1'));
    await until(() => {
      assert.equal(sink.attempts.length, 1);
    });
    for (let i = 2; i <= 20; i++) await store.appendHistory(event(`e${String(i)}`));
    sink.stall = undefined;
    unstall();
    await eventually(async () => {
      assert.equal(await store.notifyCursor('slow'), 20);
    });
    // e1 was being delivered; of e2…e20 the newest five wait, e2…e15 are dropped.
    assert.deepEqual(
      sink.delivered.map((n) => n.message),
      ['e1', 'e16', 'e17', 'e18', 'e19', 'e20'],
    );
    assert.equal(o.overflow, 14);
    assert.match(log.join('\n'), /sink slow is 19 events behind; dropped the oldest 14/);
  });

  it('leaves an event whose delivery stop() aborted for the next start (at least once)', async () => {
    const backend = new MemoryOperatorBackend();
    const store = new MemoryOperatorStore({ backend });
    await store.advanceNotifyCursor('ops', 0);
    const sink = new FakeNotificationSink('ops');
    sink.stall = new Promise(() => {});
    const first = startNotifications({ store, sinks: [sink], isLeader: () => true, log: () => {} });
    await store.appendHistory(event('in flight at stop'));
    await until(() => {
      assert.equal(sink.attempts.length, 1);
    });
    await first.stop();
    assert.equal(await store.notifyCursor('ops'), 0);
    const again = new FakeNotificationSink('ops');
    start({ store: new MemoryOperatorStore({ backend }), sinks: [again] });
    await until(() => {
      assert.equal(again.delivered.length, 1);
    });
    assert.equal(
      again.delivered[0]?.id,
      sink.attempts[0]?.id,
      'the same id: a receiver de-duplicates',
    );
  });

  it('waits out a store that fails, logging it once, and catches up after', async () => {
    const down = { yes: true };
    class FlakyStore extends MemoryOperatorStore {
      override history(o?: { afterSeq?: number; limit?: number }) {
        return down.yes ? Promise.reject(new Error('etcd away')) : super.history(o);
      }
    }
    const store = new FlakyStore();
    await store.advanceNotifyCursor('ops', 0);
    const sink = new FakeNotificationSink('ops');
    const log: string[] = [];
    start({ store, sinks: [sink], log: (l) => log.push(l) });
    await store.appendHistory(event('waits'));
    await until(() => {
      assert.ok(log.length > 0);
    });
    await new Promise((r) => setTimeout(r, 50));
    down.yes = false;
    await until(() => {
      assert.equal(sink.delivered.length, 1);
    });
    assert.deepEqual(log, [
      'notifications: sink ops: etcd away (retrying)',
      'notifications: sink ops running again',
    ]);
  });
});
