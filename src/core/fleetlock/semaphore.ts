// SPDX-License-Identifier: Apache-2.0
/**
 * The FleetLock reboot semaphore of one group (shared/reference/fleetlock.md §1, STYLE §7): a
 * counting semaphore whose slots are *owned* by holder ids. Operations are pure, recursive and
 * idempotent — locking while holding succeeds, unlocking while holding nothing succeeds — because
 * the client keeps no lock state and may repeat any request after a crash (coreos/zincati#756).
 *
 * Invariants kept by every function here: no duplicate holders, and `holders.length ≤ slots`
 * unless the slot count was lowered under existing holders ({@link withSlots}); a semaphore never
 * grows past its slots. A call that changes nothing returns the *same object*, so an adapter can
 * skip the compare-and-swap write.
 */
import { ErrorCode, MoltError } from '../errors.ts';

/**
 * The group names FleetLock allows (reference §4); molt also uses a group as a store key segment,
 * so nothing else may reach an adapter.
 */
export const GROUP_PATTERN = /^[a-zA-Z0-9.-]+$/;

/** One group's semaphore: how many slots, and who holds one (in the order they got it). */
export interface Semaphore {
  readonly slots: number;
  readonly holders: readonly string[];
}

/** Why {@link lock} answered as it did. */
export type LockReason = 'Acquired' | 'AlreadyHeld' | 'Full';

/** The outcome of {@link lock}: the new semaphore (unchanged unless `Acquired`). */
export interface LockResult {
  readonly sem: Semaphore;
  readonly ok: boolean;
  readonly reason: LockReason;
}

/** The outcome of {@link unlock}: the new semaphore, and whether `id` held a slot. */
export interface UnlockResult {
  readonly sem: Semaphore;
  readonly released: boolean;
}

function checkSlots(slots: number): void {
  if (!Number.isSafeInteger(slots) || slots < 0)
    throw new MoltError(
      ErrorCode.PolicyInvalid,
      `a semaphore needs a whole number of slots ≥ 0, not ${slots}`,
    );
}

/** An empty semaphore with `slots` slots (0 freezes the group: nobody may lock). */
export function newSemaphore(slots: number): Semaphore {
  checkSlots(slots);
  return { slots, holders: [] };
}

/** Whether `id` holds a slot. Ids are case-sensitive (the protocol says so). */
export function holds(sem: Semaphore, id: string): boolean {
  return sem.holders.includes(id);
}

/**
 * Take a slot for `id`: `AlreadyHeld` when it holds one (recursive lock), `Acquired` when a slot
 * is free, `Full` otherwise. Only `Acquired` changes the semaphore.
 */
export function lock(sem: Semaphore, id: string): LockResult {
  if (holds(sem, id)) return { sem, ok: true, reason: 'AlreadyHeld' };
  if (sem.holders.length >= sem.slots) return { sem, ok: false, reason: 'Full' };
  return { sem: { slots: sem.slots, holders: [...sem.holders, id] }, ok: true, reason: 'Acquired' };
}

/** Release the slot `id` holds, if any (idempotent: releasing nothing is not an error). */
export function unlock(sem: Semaphore, id: string): UnlockResult {
  if (!holds(sem, id)) return { sem, released: false };
  return {
    sem: { slots: sem.slots, holders: sem.holders.filter((h) => h !== id) },
    released: true,
  };
}

/**
 * Set the slot count (the configuration is the source of truth, the stored count a record of it).
 * Lowering it below the number of holders keeps them all — a node mid-reboot must not lose its
 * slot — and refuses new holders until enough of them have released.
 */
export function withSlots(sem: Semaphore, slots: number): Semaphore {
  checkSlots(slots);
  return sem.slots === slots ? sem : { slots, holders: sem.holders };
}

/** Free slots (0 when the holders exceed a lowered slot count). */
export function freeSlots(sem: Semaphore): number {
  return Math.max(0, sem.slots - sem.holders.length);
}
