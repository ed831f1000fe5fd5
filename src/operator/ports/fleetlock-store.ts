// SPDX-License-Identifier: Apache-2.0
/**
 * Where the FleetLock endpoint keeps one semaphore per group (shared/reference/fleetlock.md §7,
 * STYLE §7). The endpoint reads, mutates with the pure functions of `core/fleetlock/semaphore.ts`
 * and writes back with a compare-and-swap on the revision it read, retrying on conflict — so two
 * operators (or two requests) racing for the last slot can never both get it.
 * Implementations: `MemoryFleetLockStore` (`adapters/memory-fleetlock`) and `EtcdFleetLockStore`
 * (`adapters/etcd-fleetlock`), both passing `testkit/fleetlock-store-conformance.ts`.
 */
import type { Semaphore } from '../../core/fleetlock/semaphore.ts';

/** A group's semaphore as read, with the revision a write must name. */
export interface FleetLockRead {
  /** Undefined when nothing was ever written for the group. */
  readonly sem: Semaphore | undefined;
  /**
   * Opaque; compare only for equality. A group never written has a revision too (etcd: `'0'`),
   * so "create only if still absent" is the same call as "update only if unchanged".
   */
  readonly revision: string;
}

export interface FleetLockStore {
  /** A linearizable read of the group's semaphore. */
  read(group: string): Promise<FleetLockRead>;
  /**
   * Store `sem` for `group` if its revision is still `expectedRevision`: true when written, false
   * on conflict (somebody wrote in between; read again). Store failures throw `MoltError`s
   * (`MOLT_ETCD_UNHEALTHY`, `MOLT_TIMED_OUT` when the outcome is unknown).
   */
  write(group: string, sem: Semaphore, expectedRevision: string): Promise<boolean>;
  close(): Promise<void>;
}
