// SPDX-License-Identifier: Apache-2.0
/**
 * Fake {@link Leadership}s contending over one {@link FakeLeadershipBackend} (one "etcd"), with a
 * manual clock for expiry; passes `testkit/leadership-conformance.ts` like the etcd adapter. A
 * claim lives while its holder is open (it "renews"); after `close()` without `resign()` it
 * expires `ttlSeconds` later on the backend's clock, and the oldest waiting campaigner takes it.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Leadership } from './leadership.ts';

interface Candidate {
  readonly id: string;
  /** Take the free claim; called in campaign order. */
  take(): void;
  /** The claim was taken from this candidate (by the backend hook). */
  lost(): void;
}

interface FakeClaim {
  readonly holder: Candidate;
  /** When the holder stopped renewing (closed without resigning); undefined while it renews. */
  deadSince: number | undefined;
  readonly ttlMs: number;
}

export class FakeLeadershipBackend {
  private clock = 0;
  claim: FakeClaim | undefined;
  private readonly waiting: Candidate[] = [];

  get now(): number {
    return this.clock;
  }

  /** Let `ms` pass: a dead holder's claim expires at its TTL and a waiting candidate takes it. */
  advance(ms: number): void {
    this.clock += ms;
    const c = this.claim;
    if (c?.deadSince !== undefined && this.clock - c.deadSince >= c.ttlMs) this.free();
  }

  /** Drop the claim as etcd does when the leader's lease is revoked; the leader hears `onLost`. */
  loseClaim(): void {
    const holder = this.claim?.holder;
    this.free();
    holder?.lost();
  }

  /** The current leader's id. */
  leader(): string | undefined {
    return this.claim?.holder.id;
  }

  wait(c: Candidate): void {
    this.waiting.push(c);
    this.handOver();
  }

  unwait(c: Candidate): void {
    const i = this.waiting.indexOf(c);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  free(holder?: Candidate): void {
    if (holder !== undefined && this.claim?.holder !== holder) return;
    this.claim = undefined;
    this.handOver();
  }

  private handOver(): void {
    if (this.claim !== undefined) return;
    const next = this.waiting.shift();
    next?.take();
  }
}

export function createFakeLeadership(
  backend: FakeLeadershipBackend,
  id: string,
  options: { readonly ttlSeconds?: number } = {},
): Leadership {
  const ttlMs = (options.ttlSeconds ?? 10) * 1000;
  const listeners: (() => void)[] = [];
  let closed = false;
  let pending: { resolve: () => void; reject: (e: unknown) => void } | undefined;
  let promise: Promise<void> = Promise.resolve();
  const leading = (): boolean => backend.claim?.holder === me;
  const me: Candidate = {
    id,
    take: () => {
      backend.claim = { holder: me, deadSince: undefined, ttlMs };
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
      if (leading()) return Promise.resolve();
      if (pending === undefined) {
        promise = new Promise<void>((resolve, reject) => {
          pending = { resolve, reject };
        });
        backend.wait(me);
      }
      return promise;
    },
    isLeader: () => !closed && leading(),
    leader: () => Promise.resolve(backend.leader()),
    onLost: (listener) => {
      listeners.push(listener);
    },
    resign: () => {
      if (leading()) backend.free(me);
      return Promise.resolve();
    },
    close: () => {
      closed = true;
      backend.unwait(me);
      pending?.reject(
        new MoltError(ErrorCode.NotLeader, `operator ${id} stopped campaigning: closed`),
      );
      pending = undefined;
      if (leading() && backend.claim !== undefined) backend.claim.deadSince = backend.now;
      return Promise.resolve();
    },
  };
}
