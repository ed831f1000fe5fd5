// SPDX-License-Identifier: Apache-2.0
/**
 * {@link FleetLockStore} in memory: the FleetLock semaphores of `store: memory`. They live in this
 * process only — a restart forgets who holds a slot, so a machine that rebooted meanwhile is not
 * let go by anyone. It passes `testkit/fleetlock-store-conformance.ts` like the etcd adapter.
 * Stores opened on one {@link MemoryFleetLockBackend} share it (as operators share one etcd) and
 * close on their own. Revisions come from one backend-wide counter, as etcd's mod revisions do.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Semaphore } from '../../../core/fleetlock/semaphore.ts';
import type { FleetLockRead, FleetLockStore } from '../../ports/fleetlock-store.ts';

interface Entry {
  readonly sem: Semaphore;
  readonly revision: number;
}

/** The semaphores memory stores opened on it share: what etcd holds. */
export class MemoryFleetLockBackend {
  readonly entries = new Map<string, Entry>();
  revision = 0;
}

export class MemoryFleetLockStore implements FleetLockStore {
  private readonly backend: MemoryFleetLockBackend;
  private closed = false;

  constructor(options: { readonly backend?: MemoryFleetLockBackend } = {}) {
    this.backend = options.backend ?? new MemoryFleetLockBackend();
  }

  read(group: string): Promise<FleetLockRead> {
    if (this.closed) return closedError();
    const e = this.backend.entries.get(group);
    return Promise.resolve({ sem: e && copy(e.sem), revision: String(e?.revision ?? 0) });
  }

  write(group: string, sem: Semaphore, expectedRevision: string): Promise<boolean> {
    if (this.closed) return closedError();
    const b = this.backend;
    if (String(b.entries.get(group)?.revision ?? 0) !== expectedRevision)
      return Promise.resolve(false);
    b.entries.set(group, { sem: copy(sem), revision: ++b.revision });
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** A deep copy, as etcd's bytes would be: a caller mutating its object changes nothing here. */
const copy = (sem: Semaphore): Semaphore => structuredClone(sem);

const closedError = (): Promise<never> =>
  Promise.reject(new MoltError(ErrorCode.Internal, 'the fleetlock store is closed'));
