// SPDX-License-Identifier: Apache-2.0
/**
 * One FleetLock group's semaphore changed in the store: read → free expired slots → decide →
 * compare-and-swap, until the write lands or nothing needs writing. A conflict means another
 * request or operator changed the group in between; deciding again on the fresh value is what
 * keeps two racers from both taking the last slot (or both taking an expired one). Jittered
 * backoff spreads a storm.
 */
import { DelegateBackoff, handleWhenResult, retry } from 'cockatiel';
import { newSemaphore, recover, type Semaphore } from '../../core/fleetlock/semaphore.ts';
import type { FleetLockStore } from '../ports/fleetlock-store.ts';

/** What one attempt decided: the answer, and the semaphore to store first (none: no write). */
export interface Decision<O> {
  readonly next?: Semaphore | undefined;
  readonly outcome: O;
}

/** An attempt whose write lost to another's. */
const Conflict: unique symbol = Symbol('conflict');

/**
 * `decide` gets the stored value and the recovered one; a `next` that is the stored value is no
 * write. Resolves with the decided outcome, or undefined when every one of `attempts` lost a race.
 */
export async function updateSemaphore<O>(
  o: {
    readonly store: FleetLockStore;
    readonly onRecovered?: ((group: string, ids: readonly string[]) => void) | undefined;
  },
  at: {
    readonly group: string;
    readonly now: number;
    readonly ttlMs: number;
    readonly attempts: number;
  },
  decide: (current: Semaphore | undefined, base: Semaphore) => Decision<O>,
): Promise<O | undefined> {
  const { group, now, ttlMs } = at;
  const outcome = await retry(
    handleWhenResult((r) => r === Conflict),
    {
      maxAttempts: at.attempts - 1,
      backoff: new DelegateBackoff(({ attempt }) => Math.random() * Math.min(50, 2 ** attempt)),
    },
  ).execute(async (): Promise<O | typeof Conflict> => {
    const { sem, revision } = await o.store.read(group);
    const { sem: base, freed } = recover(sem ?? newSemaphore(0), now, ttlMs);
    const d = decide(sem, base);
    if (d.next === undefined || d.next === sem) return d.outcome;
    if (!(await o.store.write(group, d.next, revision))) return Conflict;
    if (freed.length > 0) o.onRecovered?.(group, freed);
    return d.outcome;
  });
  return outcome === Conflict ? undefined : outcome;
}
