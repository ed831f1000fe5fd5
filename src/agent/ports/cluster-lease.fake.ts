// SPDX-License-Identifier: Apache-2.0
/**
 * In-memory {@link ClusterLease}s contending over one shared {@link FakeLeaseBackend} (one "etcd"),
 * with a manual clock for TTL expiry; passes `testkit/cluster-lease-conformance.ts`. A lease is
 * kept alive while an open fake follows it; after `close()` it expires `ttl` seconds later.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ClusterLease, LeaseHolder, LeaseResume } from './cluster-lease.ts';

interface FakeLease {
  readonly ttlMs: number;
  renewedAt: number;
  keptAlive: boolean;
}

/** The shared "etcd" of fake cluster leases. */
export interface FakeLeaseBackend {
  /** The fake clock in ms. */
  readonly now: number;
  advance(ms: number): void;
  /** The key's holder, after expiring dead leases. */
  current(): LeaseHolder | undefined;
  /**
   * Drop the key and its lease as etcd does when renewals stopped reaching it for a TTL; the
   * holder that kept it alive learns of it through `onLost`. With `takenBy`, another machine that
   * was waiting takes the key at once, before the loser can react.
   */
  loseKey(takenBy?: Omit<LeaseHolder, 'since'>): void;
}

interface Follower {
  followed(): string | undefined;
  lost(leaseId: string): void;
}

interface Backend extends FakeLeaseBackend {
  key: { value: LeaseHolder; leaseId: string } | undefined;
  readonly leases: Map<string, FakeLease>;
  nextId: number;
  readonly followers: Follower[];
  sweep(): void;
}

export function createFakeLeaseBackend(): FakeLeaseBackend {
  let now = 0;
  const b: Backend = {
    get now() {
      return now;
    },
    advance(ms) {
      now += ms;
    },
    current() {
      b.sweep();
      return b.key?.value;
    },
    loseKey(takenBy) {
      const id = b.key?.leaseId;
      if (id === undefined) return;
      b.leases.delete(id);
      b.key = undefined;
      if (takenBy !== undefined) {
        const leaseId = String(b.nextId++);
        b.leases.set(leaseId, { ttlMs: 30_000, renewedAt: now, keptAlive: true });
        b.key = { value: { ...takenBy, since: new Date(now).toISOString() }, leaseId };
      }
      for (const f of b.followers) if (f.followed() === id) f.lost(id);
    },
    key: undefined,
    leases: new Map(),
    nextId: 1,
    followers: [],
    sweep() {
      for (const [id, l] of b.leases)
        if (!l.keptAlive && now - l.renewedAt >= l.ttlMs) b.leases.delete(id);
      if (b.key !== undefined && !b.leases.has(b.key.leaseId)) b.key = undefined;
    },
  };
  return b;
}

/** A fake agent `holder` on `backend`. */
export function createFakeClusterLease(
  backend: FakeLeaseBackend,
  holder: string,
  options: { readonly ttlSeconds?: number; readonly rebootTtlSeconds?: number } = {},
): ClusterLease {
  const b = backend as Backend;
  let followed: string | undefined;
  const listeners: ((leaseId: string) => void)[] = [];
  b.followers.push({
    followed: () => followed,
    lost: (id) => {
      followed = undefined;
      for (const l of listeners) l(id);
    },
  });
  const follow = (id: string | undefined): void => {
    const old = followed === undefined ? undefined : b.leases.get(followed);
    if (old !== undefined && followed !== id)
      Object.assign(old, { keptAlive: false, renewedAt: b.now });
    followed = id;
    if (id !== undefined) Object.assign(b.leases.get(id) ?? {}, { keptAlive: true });
  };
  const grant = (ttlSeconds: number): string => {
    const id = String(b.nextId++);
    b.leases.set(id, { ttlMs: ttlSeconds * 1000, renewedAt: b.now, keptAlive: false });
    return id;
  };
  const mine = (op: string): boolean =>
    b.key?.value.holder === holder && b.key.value.operationId === op;
  const take = (op: string, ttl: number): string => {
    b.sweep();
    if (b.key !== undefined && !mine(op)) {
      const v = b.key.value;
      throw new MoltError(
        ErrorCode.LeaseHeld,
        `the control-plane upgrade lease is held by ${v.holder} for operation ${v.operationId}`,
      );
    }
    if (b.key === undefined)
      b.key = {
        value: { holder, operationId: op, since: new Date(b.now).toISOString() },
        leaseId: grant(ttl),
      };
    follow(b.key.leaseId);
    return b.key.leaseId;
  };
  const ttl = options.ttlSeconds ?? 30;
  const rebootTtl = options.rebootTtlSeconds ?? 600;
  return {
    acquire: (op) => Promise.resolve().then(() => void take(op, ttl)),
    extendForReboot: (op) =>
      Promise.resolve().then(() => {
        take(op, rebootTtl);
        if (b.key === undefined) throw new Error('unreachable');
        const old = b.key.leaseId;
        b.key.leaseId = grant(rebootTtl);
        follow(b.key.leaseId);
        b.leases.delete(old);
        return b.key.leaseId;
      }),
    resume: (op) =>
      Promise.resolve().then((): LeaseResume => {
        b.sweep();
        if (b.key !== undefined && !mine(op)) return { outcome: 'held', holder: b.key.value };
        if (b.key !== undefined) {
          follow(b.key.leaseId);
          return { outcome: 'kept' };
        }
        take(op, rebootTtl);
        return { outcome: 'retaken' };
      }),
    release: (op) =>
      Promise.resolve().then(() => {
        b.sweep();
        follow(undefined);
        if (b.key !== undefined && mine(op)) {
          b.leases.delete(b.key.leaseId);
          b.key = undefined;
        }
      }),
    holder: () => Promise.resolve(backend.current()),
    onLost: (listener) => {
      listeners.push(listener);
    },
    close: () =>
      Promise.resolve().then(() => {
        follow(undefined);
      }),
  };
}
