// SPDX-License-Identifier: Apache-2.0
/**
 * Sends the operator's history to its notification sinks (docs/adr/0009). One worker per sink
 * walks the history from that sink's cursor in the store, in order, and hands each event the sink
 * wants to it; the cursor moves past an event once the sink delivered it or gave up on it.
 *
 * - **Only the leader sends.** A worker acts while `isLeader()`, reading the cursor from the store
 *   at each step, so a failover resumes where the old leader stopped.
 * - **At least once.** The cursor is written after the delivery: an operator killed between the
 *   two, or deposed mid-delivery, leaves the event to the next leader, which sends it again with
 *   the same id (`notification.ts`); receivers de-duplicate on it.
 * - **A new sink starts at the head**: it hears what happens from now on, not the whole history.
 * - **Bounded.** Memory holds one page of events per sink; a sink more than `maxBacklog` events
 *   behind (dead for long, or slow) drops the oldest; each dropped event is counted and logged.
 *   A dead sink never blocks the loop (which never waits for a worker) nor another sink.
 */
import type { NotificationSink } from '../ports/notification-sink.ts';
import type { HistoryEvent, OperatorStore } from '../ports/store.ts';
import { notificationOf, type NotificationContext } from './notification.ts';
import { errorMessage } from '../../core/errors.ts';

/** Why an event was not delivered: the sink gave up on it, or the backlog overflowed. */
export type DropReason = 'failed' | 'overflow';

/** What the dispatcher tells the metrics. */
export interface NotifyObserver {
  delivered(sink: string): void;
  dropped(sink: string, reason: DropReason, count: number): void;
  /** Events after the sink's cursor, as of its last look. */
  backlog(sink: string, events: number): void;
  /** The sink's worker looked at the history as the leader and handed on what it found, if anything. */
  checked(sink: string): void;
}

export interface NotifyOptions {
  readonly store: OperatorStore;
  readonly sinks: readonly NotificationSink[];
  readonly isLeader: () => boolean;
  readonly log: (line: string) => void;
  readonly observer?: NotifyObserver;
  /** How often an idle worker looks for new history. @default 1000 */
  readonly pollMs?: number;
  /** At most this many events wait for one sink; older ones are dropped. @default 1000 */
  readonly maxBacklog?: number;
  /** Events read from the store at once. @default 100 */
  readonly pageSize?: number;
}

export interface Notifications {
  /** Look for new history now (after a pass) rather than at the next poll. */
  kick(): void;
  /** Abort deliveries under way (their events stay unhandled) and wait for the workers. */
  stop(): Promise<void>;
}

/** A sleep that {@link Wakeup.wake} ends early. */
class Wakeup {
  #waiters: (() => void)[] = [];
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const waiters = this.#waiters;
      function done(): void {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i !== -1) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
    });
  }
  wake(): void {
    for (const done of [...this.#waiters]) done();
  }
}

class SinkWorker {
  #head = 0;
  #lastError = '';
  private readonly o: NotifyOptions;
  private readonly sink: NotificationSink;
  private readonly signal: AbortSignal;

  constructor(o: NotifyOptions, sink: NotificationSink, signal: AbortSignal) {
    this.o = o;
    this.sink = sink;
    this.signal = signal;
  }

  /**
   * One step: true when it handled events and should look again at once. The cursor is read from
   * the store each time, not kept: another operator may have led (and moved it) meanwhile.
   */
  async step(): Promise<boolean> {
    if (!this.o.isLeader()) return false;
    const cursor = await this.bound(await this.cursor());
    const page = await this.o.store.history({ afterSeq: cursor, limit: this.o.pageSize ?? 100 });
    if (page.length === 0) {
      this.o.observer?.checked(this.sink.name);
      return false;
    }
    await this.walk(page, cursor, await this.o.store.read());
    if (this.signal.aborted || !this.o.isLeader()) return false;
    this.o.observer?.checked(this.sink.name);
    if (this.#lastError !== '') this.o.log(`notifications: sink ${this.sink.name} running again`);
    this.#lastError = '';
    return true;
  }

  /** Hand each event of `page` to the sink, in order, moving the cursor past what is done. */
  private async walk(
    page: readonly HistoryEvent[],
    cursor: number,
    context: NotificationContext,
  ): Promise<void> {
    const at = { handled: cursor, written: cursor };
    for (const e of page) {
      if (this.signal.aborted || !this.o.isLeader()) break;
      const outcome = await this.handle(e, context);
      if (outcome === 'aborted') break;
      at.handled = e.seq;
      if (outcome === 'unwanted') continue;
      await this.advance(e.seq);
      at.written = e.seq;
    }
    // One write for a run of events the sink does not want, not one each.
    if (at.handled > at.written) await this.advance(at.handled);
  }

  /** A failed step (the store away): logged once per distinct error, retried at the next poll. */
  report(e: unknown): void {
    const line = errorMessage(e);
    if (line !== this.#lastError)
      this.o.log(`notifications: sink ${this.sink.name}: ${line} (retrying)`);
    this.#lastError = line;
  }

  private async cursor(): Promise<number> {
    const { store, log } = this.o;
    const stored = await store.notifyCursor(this.sink.name);
    if (stored !== undefined) return stored;
    const head = await store.historyHead();
    await store.advanceNotifyCursor(this.sink.name, head);
    log(`notifications: new sink ${this.sink.name} starts after history seq ${String(head)}`);
    return head;
  }

  /**
   * Drop what is more than `maxBacklog` behind the head (seqs are handed out one by one);
   * resolves with the cursor to read after.
   */
  private async bound(cursor: number): Promise<number> {
    const max = this.o.maxBacklog ?? 1000;
    this.#head = await this.o.store.historyHead();
    const behind = this.#head - cursor;
    this.o.observer?.backlog(this.sink.name, Math.max(0, Math.min(behind, max)));
    if (behind <= max) return cursor;
    const skipped = behind - max;
    this.o.observer?.dropped(this.sink.name, 'overflow', skipped);
    this.o.log(
      `notifications: sink ${this.sink.name} is ${String(behind)} events behind; dropped the oldest ${String(skipped)}`,
    );
    await this.advance(this.#head - max);
    return this.#head - max;
  }

  /**
   * Hand `e` to the sink if it wants it: `sent` when delivered or given up on (the cursor moves
   * past it now); `aborted` when stopping (unhandled, so sent again after a restart).
   */
  private async handle(
    e: HistoryEvent,
    context: NotificationContext,
  ): Promise<'sent' | 'unwanted' | 'aborted'> {
    const n = notificationOf(e, context);
    if (!this.sink.wants(n.kind)) return 'unwanted';
    try {
      await this.sink.deliver(n, this.signal);
      this.o.observer?.delivered(this.sink.name);
    } catch (err) {
      if (this.signal.aborted) return 'aborted';
      this.o.observer?.dropped(this.sink.name, 'failed', 1);
      this.o.log(
        `notifications: dropped ${n.kind} ${n.id} for sink ${this.sink.name}: ${errorMessage(err)}`,
      );
    }
    return 'sent';
  }

  private async advance(seq: number): Promise<void> {
    await this.o.store.advanceNotifyCursor(this.sink.name, seq);
    this.o.observer?.backlog(this.sink.name, Math.max(0, this.#head - seq));
  }
}

/** Start one worker per sink; they run until {@link Notifications.stop}. */
export function startNotifications(o: NotifyOptions): Notifications {
  const abort = new AbortController();
  const wakeup = new Wakeup();
  const pollMs = o.pollMs ?? 1000;
  // A function, not the property: TypeScript would take it as still false after each await.
  const stopped = (): boolean => abort.signal.aborted;
  const run = async (worker: SinkWorker): Promise<void> => {
    while (!stopped()) {
      let more = false;
      try {
        more = await worker.step();
      } catch (e) {
        if (!stopped()) worker.report(e);
      }
      if (!more && !stopped()) await wakeup.wait(pollMs);
    }
  };
  const runs = o.sinks.map((sink) => run(new SinkWorker(o, sink, abort.signal)));
  return {
    kick: () => {
      wakeup.wake();
    },
    async stop() {
      abort.abort();
      wakeup.wake();
      await Promise.all(runs);
    },
  };
}
