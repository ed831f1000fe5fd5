// SPDX-License-Identifier: Apache-2.0
/**
 * {@link Leadership} in memory: the election of `store: memory`, between operators of one process
 * contending over one {@link MemoryLeadershipBackend} (one "etcd"). It passes
 * `testkit/leadership-conformance.ts` like the etcd adapter. A claim lives while its holder is
 * open (it "renews"); after `close()` without `resign()` it expires `ttlSeconds` later on the
 * backend's {@link LeadershipClock}, and the oldest waiting campaigner takes it. A restart of the
 * process forgets the claim: there is nobody left to hand it to.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Leadership } from '../../ports/leadership.ts';

/** What a dead holder's claim expires on: real timers by default, a hand-moved clock in tests. */
export interface LeadershipClock {
  /** Run `fn` once, after `ms` have passed on this clock. */
  after(ms: number, fn: () => void): void;
}

/** Real time; the timer never keeps the process alive. */
export const systemLeadershipClock: LeadershipClock = {
  after: (ms, fn) => {
    setTimeout(fn, ms).unref();
  },
};

interface Candidate {
  readonly id: string;
  /** Take the free claim; called in campaign order. */
  take(): void;
  /** The claim was taken from this candidate (by the backend). */
  lost(): void;
}

interface Claim {
  readonly holder: Candidate;
  readonly ttlMs: number;
}

/** What the operators of one process share: the claim and the campaigners waiting for it. */
export class MemoryLeadershipBackend {
  private current: Claim | undefined;
  private readonly waiting: Candidate[] = [];
  private readonly clock: LeadershipClock;

  constructor(options: { readonly clock?: LeadershipClock } = {}) {
    this.clock = options.clock ?? systemLeadershipClock;
  }

  /** The current leader's id. */
  leader(): string | undefined {
    return this.current?.holder.id;
  }

  /** Drop the claim as etcd does when the leader's lease is revoked; the leader hears `onLost`. */
  loseClaim(): void {
    const holder = this.current?.holder;
    this.free();
    holder?.lost();
  }

  holds(c: Candidate): boolean {
    return this.current?.holder === c;
  }

  claim(c: Candidate, ttlMs: number): void {
    this.current = { holder: c, ttlMs };
  }

  wait(c: Candidate): void {
    this.waiting.push(c);
    this.handOver();
  }

  unwait(c: Candidate): void {
    const i = this.waiting.indexOf(c);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /** Free the claim (only `holder`'s, when given) and hand it to the oldest campaigner. */
  free(holder?: Candidate): void {
    if (holder !== undefined && this.current?.holder !== holder) return;
    this.current = undefined;
    this.handOver();
  }

  /** `holder` stopped renewing: its claim expires after its TTL unless it is gone by then. */
  abandon(holder: Candidate): void {
    const dead = this.current;
    if (dead?.holder !== holder) return;
    this.clock.after(dead.ttlMs, () => {
      if (this.current === dead) this.free();
    });
  }

  private handOver(): void {
    if (this.current !== undefined) return;
    this.waiting.shift()?.take();
  }
}

/** One operator's {@link Leadership} on `backend`, its claim living `ttlSeconds` after it dies. */
export function createMemoryLeadership(
  backend: MemoryLeadershipBackend,
  id: string,
  options: { readonly ttlSeconds?: number } = {},
): Leadership {
  const ttlMs = (options.ttlSeconds ?? 10) * 1000;
  const listeners: (() => void)[] = [];
  let closed = false;
  let pending: { resolve: () => void; reject: (e: unknown) => void } | undefined;
  let promise: Promise<void> = Promise.resolve();
  const me: Candidate = {
    id,
    take: () => {
      backend.claim(me, ttlMs);
      pending?.resolve();
      pending = undefined;
    },
    lost: () => {
      for (const l of listeners) l();
    },
  };
  return {
    id,
    campaign: () => {
      if (closed)
        return Promise.reject(new MoltError(ErrorCode.NotLeader, `operator ${id} is closed`));
      if (backend.holds(me)) return Promise.resolve();
      if (pending === undefined) {
        promise = new Promise<void>((resolve, reject) => {
          pending = { resolve, reject };
        });
        backend.wait(me);
      }
      return promise;
    },
    isLeader: () => !closed && backend.holds(me),
    leader: () => Promise.resolve(backend.leader()),
    onLost: (listener) => {
      listeners.push(listener);
    },
    resign: () => {
      backend.free(me);
      return Promise.resolve();
    },
    close: () => {
      closed = true;
      backend.unwait(me);
      pending?.reject(
        new MoltError(ErrorCode.NotLeader, `operator ${id} stopped campaigning: closed`),
      );
      pending = undefined;
      backend.abandon(me);
      return Promise.resolve();
    },
  };
}
