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
 *
 * Slots expire: the protocol has none, so a node that dies holding a slot held its
 * group for ever (airlock, poseidon: "recovery is a manual delete"). A slot taken with an expiry
 * lasts until then; the holder renews it by locking again (Zincati re-sends pre-reboot while it
 * waits), and {@link recover} frees the expired ones. Expiries are epoch ms, given by the caller:
 * core has no clock.
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
  /**
   * When each holder's slot expires (epoch ms), by id. A holder missing here never expires by
   * itself — a record written before slots expired — until {@link recover} gives it one.
   */
  readonly expires?: Readonly<Record<string, number>>;
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
 * When `id`'s slot expires; undefined when it holds none or its slot has no expiry. Own keys only:
 * an id like `constructor` must never read `Object.prototype`.
 */
export function expiryOf(sem: Semaphore, id: string): number | undefined {
  const e = sem.expires;
  return e !== undefined && Object.hasOwn(e, id) ? e[id] : undefined;
}

/** `sem` with `holders`, each holder's expiry from `expiryOf(id)` (omitted when there is none). */
function rebuild(
  sem: Semaphore,
  holders: readonly string[],
  expiryOf: (id: string) => number | undefined,
): Semaphore {
  const expires: Record<string, number> = {};
  for (const h of holders) {
    const at = expiryOf(h);
    if (at !== undefined) Object.defineProperty(expires, h, { value: at, enumerable: true });
  }
  return Object.keys(expires).length === 0
    ? { slots: sem.slots, holders }
    : { slots: sem.slots, holders, expires };
}

/**
 * Take a slot for `id`: `AlreadyHeld` when it holds one (recursive lock), `Acquired` when a slot
 * is free, `Full` otherwise. With `expires` (epoch ms) the slot lasts until then, and locking
 * again while holding renews it (a new object when the expiry moves). Without it, only
 * `Acquired` changes the semaphore.
 */
export function lock(sem: Semaphore, id: string, expires?: number): LockResult {
  const at = (h: string): number | undefined => (h === id ? expires : expiryOf(sem, h));
  if (holds(sem, id)) {
    const same = expires === undefined || expiryOf(sem, id) === expires;
    return { sem: same ? sem : rebuild(sem, sem.holders, at), ok: true, reason: 'AlreadyHeld' };
  }
  if (sem.holders.length >= sem.slots) return { sem, ok: false, reason: 'Full' };
  return { sem: rebuild(sem, [...sem.holders, id], at), ok: true, reason: 'Acquired' };
}

/** Release the slot `id` holds, if any (idempotent: releasing nothing is not an error). */
export function unlock(sem: Semaphore, id: string): UnlockResult {
  if (!holds(sem, id)) return { sem, released: false };
  return {
    sem: rebuild(
      sem,
      sem.holders.filter((h) => h !== id),
      (h) => expiryOf(sem, h),
    ),
    released: true,
  };
}

/** The outcome of {@link recover}: the new semaphore, and the holders whose slots expired. */
export interface RecoverResult {
  readonly sem: Semaphore;
  readonly freed: readonly string[];
}

/**
 * Free the slots that expired at `now` (epoch ms; an expiry at `now` has expired), so a holder
 * that died — or an id that took a slot and never came back — stops holding its group. The
 * others' expiries are capped at `now + ttlMs`: a holder without one (a record from before
 * expiry existed) gets one, and a lowered TTL applies to slots already held. Returns the same
 * object when nothing changes.
 */
export function recover(sem: Semaphore, now: number, ttlMs: number): RecoverResult {
  const cap = now + ttlMs;
  const freed = sem.holders.filter((h) => (expiryOf(sem, h) ?? cap) <= now);
  const changed = freed.length > 0 || sem.holders.some((h) => (expiryOf(sem, h) ?? Infinity) > cap);
  if (!changed) return { sem, freed };
  const kept = sem.holders.filter((h) => !freed.includes(h));
  return { sem: rebuild(sem, kept, (h) => Math.min(expiryOf(sem, h) ?? cap, cap)), freed };
}

/**
 * Set the slot count (the configuration is the source of truth, the stored count a record of it).
 * Lowering it below the number of holders keeps them all — a node mid-reboot must not lose its
 * slot — and refuses new holders until enough of them have released.
 */
export function withSlots(sem: Semaphore, slots: number): Semaphore {
  checkSlots(slots);
  return sem.slots === slots ? sem : { ...sem, slots };
}

/** Free slots (0 when the holders exceed a lowered slot count). */
export function freeSlots(sem: Semaphore): number {
  return Math.max(0, sem.slots - sem.holders.length);
}
