// SPDX-License-Identifier: Apache-2.0
/**
 * In-memory {@link FleetLockStore} for endpoint tests; passes `testkit/fleetlock-store-conformance.ts`
 * like the etcd adapter. Revisions come from one store-wide counter, as etcd's mod revisions do.
 * `beforeWrite` lets a test slip another writer in between a read and a write; `latencyMs` makes
 * every read answer after a delay, as a networked store does, so concurrent requests really race
 * (without it a request's read and write run back to back and rarely conflict).
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Semaphore } from '../../core/fleetlock/semaphore.ts';
import type { FleetLockRead, FleetLockStore } from './fleetlock-store.ts';

interface Entry {
  readonly sem: Semaphore;
  readonly revision: number;
}

export class FakeFleetLockStore implements FleetLockStore {
  private readonly entries = new Map<string, Entry>();
  private revision = 0;
  private closed = false;
  private readonly latencyMs: number | undefined;
  /** Writes attempted and writes refused as conflicts (for tests of the retry loop). */
  readonly stats = { writes: 0, conflicts: 0 };
  /** Called before each write is judged; may write itself to force a conflict. */
  beforeWrite: ((group: string) => void) | undefined;

  constructor(options: { readonly latencyMs?: number } = {}) {
    this.latencyMs = options.latencyMs;
  }

  async read(group: string): Promise<FleetLockRead> {
    if (this.closed) return closedError();
    const e = this.entries.get(group);
    const answer = { sem: e && copy(e.sem), revision: String(e?.revision ?? 0) };
    // The value is taken now and delivered later, so it can be stale on arrival.
    if (this.latencyMs !== undefined) await new Promise((r) => setTimeout(r, this.latencyMs));
    return answer;
  }

  write(group: string, sem: Semaphore, expectedRevision: string): Promise<boolean> {
    if (this.closed) return closedError();
    this.beforeWrite?.(group);
    this.stats.writes++;
    if (String(this.entries.get(group)?.revision ?? 0) !== expectedRevision) {
      this.stats.conflicts++;
      return Promise.resolve(false);
    }
    this.entries.set(group, { sem: copy(sem), revision: ++this.revision });
    return Promise.resolve(true);
  }

  /** Overwrite a group's semaphore without a compare (an admin's edit, or a competing writer). */
  put(group: string, sem: Semaphore): void {
    this.entries.set(group, { sem: copy(sem), revision: ++this.revision });
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

const copy = (sem: Semaphore): Semaphore => ({ slots: sem.slots, holders: [...sem.holders] });

const closedError = (): Promise<never> =>
  Promise.reject(new MoltError(ErrorCode.Internal, 'the fleetlock store is closed'));
