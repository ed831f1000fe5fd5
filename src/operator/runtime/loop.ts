// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's main loop (docs/adr/0005 §4): campaign for leadership, then reconcile every
 * `intervalMs` while leading; on losing it, stop acting and campaign again. A failed pass (store
 * or network away) is logged and retried next period: the operator never exits on its own.
 *
 * A pass that is already running when leadership is lost finishes: its writes are compare-and-set
 * and a start is refused for a machine that already has one (`MOLT_ALREADY_STARTED`), so the
 * overlap with a new leader cannot start a machine twice; the claim's TTL bounds how long it lasts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isMoltError } from '../../core/errors.ts';
import type { Leadership } from '../ports/leadership.ts';
import type { ReconcileDeps } from './deps.ts';
import { reconcile, type PassState } from './reconcile.ts';

export interface OperatorLoop {
  /** Settles when the loop has stopped (after {@link OperatorLoop.stop}). */
  readonly done: Promise<void>;
  /** Finish the pass in progress, resign leadership, stop. */
  stop(): Promise<void>;
  /** Resolves after the next full pass (tests and `molt operator --once`). */
  nextPass(): Promise<void>;
}

const describe = (e: unknown): string =>
  isMoltError(e)
    ? `${e.code}: ${e.message}`
    : e instanceof Error
      ? (e.stack ?? e.message)
      : String(e);

export function startOperatorLoop(
  d: ReconcileDeps,
  leadership: Leadership,
  o: { readonly intervalMs: number },
): OperatorLoop {
  const stopping = new AbortController();
  // A function, not a property read: the loops below must see an abort that happens while they await.
  const stopped = (): boolean => stopping.signal.aborted;
  let waiters: (() => void)[] = [];
  const lead = async (): Promise<void> => {
    const state: PassState = { lastDiscovery: undefined };
    d.log(`leading as ${leadership.id}`);
    while (!stopped() && leadership.isLeader()) {
      try {
        await reconcile(d, state);
      } catch (e) {
        d.log(`reconcile pass failed, retrying in ${String(o.intervalMs)} ms: ${describe(e)}`);
      }
      const woken = waiters;
      waiters = [];
      for (const w of woken) w();
      await sleep(o.intervalMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };
  const run = async (): Promise<void> => {
    while (!stopped()) {
      try {
        await leadership.campaign();
      } catch (e) {
        if (stopped()) return;
        d.log(`campaign failed, retrying: ${describe(e)}`);
        await sleep(o.intervalMs, undefined, { signal: stopping.signal }).catch(() => undefined);
        continue;
      }
      await lead();
      if (!stopped()) d.log(`lost leadership (${leadership.id}); campaigning again`);
    }
  };
  const done = run();
  return {
    done,
    async stop() {
      stopping.abort();
      await done;
      await leadership.resign().catch(() => undefined);
    },
    nextPass: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
      }),
  };
}
