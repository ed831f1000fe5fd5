// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's main loop (docs/adr/0005 §4): campaign for leadership, then reconcile every
 * `intervalMs` while leading — sooner when a discovery scan falls due, so a new release waits at
 * most `discoverEvery` to be seen, not that rounded up to whole periods — and on losing it, stop
 * acting and campaign again. A failed pass (store or network away) is logged and retried next
 * period: the operator never exits on its own.
 *
 * A pass that is already running when leadership is lost finishes: its writes are compare-and-set
 * and a start is refused for a machine that already has one (`MOLT_ALREADY_STARTED`), so the
 * overlap with a new leader cannot start a machine twice. Every call a pass makes has a deadline
 * of its own; a pass that still runs past `slowPassMs` is said in the log, and again each
 * `slowPassMs` after, with whether this operator still leads: an operator that went quiet in a
 * pass is then seen, not guessed at.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isMoltError } from '../../core/errors.ts';
import type { Leadership } from '../ports/leadership.ts';
import type { ReconcileDeps } from './deps.ts';
import { untilDiscovery } from './discover.ts';
import { newPassState, reconcile } from './reconcile.ts';

export interface OperatorLoop {
  /** Settles when the loop has stopped (after {@link OperatorLoop.stop}). */
  readonly done: Promise<void>;
  /** Finish the pass in progress, resign leadership, stop. */
  stop(): Promise<void>;
  /** Resolves after the next full pass (tests and `molt operator --once`). */
  nextPass(): Promise<void>;
  /**
   * Start the next pass now rather than at the end of the period (an agent reported progress);
   * during a pass, start another one {@link minGapMs} after it ends — or, `urgent` (a machine
   * finished: its slot is free for the next start), as soon as it ends.
   */
  wake(o?: { readonly urgent?: boolean }): void;
}

/** Passes woken by events start at most this often, so a burst of events costs one pass. */
export const minGapMs = 200;

const describe = (e: unknown): string =>
  isMoltError(e)
    ? `${e.code}: ${e.message}`
    : e instanceof Error
      ? (e.stack ?? e.message)
      : String(e);

const slowPassMs = 60_000;

/** Log each `everyMs` of a pass still running; the caller clears the timer when it ends. */
function sayWhenSlow(d: ReconcileDeps, leadership: Leadership, everyMs: number): NodeJS.Timeout {
  const t0 = performance.now();
  const timer = setInterval(() => {
    const s = Math.round((performance.now() - t0) / 1000);
    const leading = leadership.isLeader() ? 'still leading' : 'no longer leading';
    d.log(`reconcile pass still running after ${String(s)} s (${leading})`);
  }, everyMs);
  timer.unref();
  return timer;
}

/** Options of {@link startOperatorLoop}. */
export interface LoopOptions {
  readonly intervalMs: number;
  /** The least time between a pass and the next one a plain wake asks for. @default minGapMs */
  readonly minGapMs?: number;
  /**
   * The loop's clock for its gaps and naps, ended early by `signal`; tests pass one they drive by
   * hand to see the loop asleep rather than wait out wall-clock time. @default timers/promises
   */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  /** After this long in one pass, and each time as long again, the log says so. @default 60000 */
  readonly slowPassMs?: number;
  /** Told after every pass (the API's metrics: last pass time and duration, failed passes). */
  readonly onPass?: (pass: {
    readonly startedAt: number;
    readonly durationMs: number;
    readonly ok: boolean;
  }) => void;
}

export function startOperatorLoop(
  d: ReconcileDeps,
  leadership: Leadership,
  o: LoopOptions,
): OperatorLoop {
  const stopping = new AbortController();
  const rest: NonNullable<LoopOptions['sleep']> =
    o.sleep ?? ((ms, signal) => sleep(ms, undefined, { signal }));
  // A function, not a property read: the loops below must see an abort that happens while they await.
  const stopped = (): boolean => stopping.signal.aborted;
  let waiters: (() => void)[] = [];
  let woken = false;
  let napping: AbortController | undefined;
  let urgent = false;
  let gapping: AbortController | undefined;
  /** The minimum gap after a pass, cut short by an urgent wake. */
  const gap = async (ms: number): Promise<void> => {
    gapping = new AbortController();
    const signal = AbortSignal.any([stopping.signal, gapping.signal]);
    if (!urgent) await rest(ms, signal).catch(() => undefined);
    urgent = false;
    gapping = undefined;
  };
  /** Sleep `ms`, or less when woken; a wake during the pass shortens the nap to the minimum gap. */
  const nap = async (ms: number): Promise<void> => {
    napping = new AbortController();
    const signal = AbortSignal.any([stopping.signal, napping.signal]);
    if (!woken) await rest(ms, signal).catch(() => undefined);
    woken = false;
    napping = undefined;
  };
  const lead = async (): Promise<void> => {
    const state = newPassState();
    d.log(`leading as ${leadership.id}`);
    while (!stopped() && leadership.isLeader()) {
      const startedAt = d.now();
      const t0 = performance.now();
      let ok = true;
      const slow = sayWhenSlow(d, leadership, o.slowPassMs ?? slowPassMs);
      try {
        await reconcile(d, state);
      } catch (e) {
        ok = false;
        d.log(`reconcile pass failed, retrying in ${String(o.intervalMs)} ms: ${describe(e)}`);
      } finally {
        clearInterval(slow);
      }
      o.onPass?.({ startedAt, durationMs: performance.now() - t0, ok });
      const passed = waiters;
      waiters = [];
      for (const w of passed) w();
      // Wake early when a discovery scan falls due before the next pass would start.
      const due = untilDiscovery(d, state);
      const wait = due > 0 ? Math.min(o.intervalMs, due) : o.intervalMs;
      const least = o.minGapMs ?? minGapMs;
      await gap(Math.min(least, wait));
      await nap(Math.max(0, wait - least));
    }
  };
  const run = async (): Promise<void> => {
    while (!stopped()) {
      try {
        await leadership.campaign();
      } catch (e) {
        if (stopped()) return;
        d.log(`campaign failed, retrying: ${describe(e)}`);
        await rest(o.intervalMs, stopping.signal).catch(() => undefined);
        continue;
      }
      await lead();
      if (stopped()) return;
      d.log(`lost leadership (${leadership.id}); campaigning again`);
      // Never campaign again without yielding: a claim won and lost at once must not spin.
      await rest(o.minGapMs ?? minGapMs, stopping.signal).catch(() => undefined);
    }
  };
  const done = run();
  return {
    done,
    async stop() {
      stopping.abort();
      await done;
      // A failed resign costs the others one TTL of waiting, not correctness: say so, and stop.
      await leadership.resign().catch((e: unknown) => {
        d.log(`could not resign leadership (${leadership.id}): ${describe(e)}`);
      });
    },
    wake(w) {
      woken = true;
      napping?.abort();
      if (w?.urgent !== true) return;
      urgent = true;
      gapping?.abort();
    },
    nextPass: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
      }),
  };
}
