// SPDX-License-Identifier: Apache-2.0
/**
 * The one writer of the operator's transitions (docs/adr/0005 §4): a rollout created, paused,
 * halted or completed, a machine started, finished or rolled back, a hold or a registration. Each
 * is a store write, then a line in the operator's log, then a history event — always in that
 * order, so the history (what `molt rollout status`, the dashboard and the Kubernetes Events show)
 * never tells of a change the store does not hold. The loop (`loop/`) records its own transitions
 * here and the API (`api/`) the ones a person asks for; neither knows about the other.
 */
import type { NewHistoryEvent, OperatorStore } from '../ports/store.ts';

/** What a transition leaves behind once it is written. */
export interface TransitionRecord {
  /** The history event; `at` is the writer's `now()` unless given. */
  readonly event: Omit<NewHistoryEvent, 'at'> & { readonly at?: number };
  /** A line for the operator's own log; none when omitted. */
  readonly log?: string;
}

/** One transition: the store write, and the record of what it wrote. */
export interface Transition<T> {
  /** The store write; its result tells {@link Transition.record} what changed. */
  readonly write: (store: OperatorStore) => Promise<T>;
  /**
   * The record of the write, or a function of its result giving the record — or undefined when
   * the write found nothing to change (somebody got there first): then nothing is recorded.
   */
  readonly record: TransitionRecord | ((written: T) => TransitionRecord | undefined);
}

/** Where transitions are written: the loop's and the API's dependencies both fit. */
export interface TransitionSink {
  readonly store: OperatorStore;
  /** Epoch ms. */
  readonly now: () => number;
  /** The operator's log; without one, log lines are dropped (the history still has them). */
  readonly log?: (line: string) => void;
}

/** Write `t` to the store, then log and append its history event; true when it was recorded. */
export async function recordTransition<T>(d: TransitionSink, t: Transition<T>): Promise<boolean> {
  const written = await t.write(d.store);
  const record = typeof t.record === 'function' ? t.record(written) : t.record;
  if (record === undefined) return false;
  if (record.log !== undefined) d.log?.(record.log);
  const { at, ...event } = record.event;
  await d.store.appendHistory({ at: at ?? d.now(), ...event });
  return true;
}
