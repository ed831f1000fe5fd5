// SPDX-License-Identifier: Apache-2.0
/** Shared state and small steps of the etcd cluster lease (see cluster-lease.ts). */
import type { Etcd3 } from 'etcd3';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { deadline } from '../../../platform/etcd/client.ts';
import {
  keepAliveOnce,
  startKeepAlive,
  type KeepAliveLoop,
} from '../../../platform/etcd/keep-alive.ts';
import { etcdCall, toMoltError } from './errors.ts';
import { readLease, type LeaseRecord } from './lease-key.ts';

/** Options for `createEtcdClusterLease`. */
export interface EtcdClusterLeaseOptions {
  readonly endpoints: readonly string[];
  /** This machine's node name, written as the holder. */
  readonly holder: string;
  /** TTL while the agent runs: how long a dead holder blocks the others. @default 30 */
  readonly ttlSeconds?: number;
  /** TTL across a reboot. @default 600 */
  readonly rebootTtlSeconds?: number;
  /** @default ttlSeconds / 3 */
  readonly keepAliveEverySeconds?: number;
  /** Deadline of each etcd request. @default 5000 */
  readonly requestTimeoutMs?: number;
  /** Called when etcd says the kept-alive lease is gone (the key expired). */
  readonly onLost?: (leaseId: string) => void;
}

/** One adapter instance: its client and the lease it keeps alive. */
export interface LeaseCtx {
  readonly o: EtcdClusterLeaseOptions;
  readonly client: Etcd3;
  readonly timeoutMs: number;
  loop: KeepAliveLoop | undefined;
}

export const mine = (ctx: LeaseCtx, r: LeaseRecord, operationId: string): boolean =>
  r.value.holder === ctx.o.holder && r.value.operationId === operationId;

export const read = (ctx: LeaseCtx): Promise<LeaseRecord | undefined> =>
  etcdCall('reading the upgrade lease', readLease(ctx.client, ctx.timeoutMs));

export function held(r: LeaseRecord): MoltError {
  return new MoltError(
    ErrorCode.LeaseHeld,
    `the control-plane upgrade lease is held by ${r.value.holder} for operation ${r.value.operationId} (since ${r.value.since})`,
    {
      hint: "wait for that upgrade to finish; a dead holder's lease expires at its TTL",
      retryable: true,
    },
  );
}

export async function grant(ctx: LeaseCtx, ttlSeconds: number): Promise<string> {
  const res = await etcdCall(
    'granting a lease',
    ctx.client.leaseClient.leaseGrant({ TTL: ttlSeconds }, deadline(ctx.timeoutMs)),
  );
  return res.ID;
}

/** Revoke with its own 5 s deadline; a failure only means the lease lives until its TTL. */
export async function revokeQuietly(ctx: LeaseCtx, leaseId: string): Promise<void> {
  await ctx.client.leaseClient.leaseRevoke({ ID: leaseId }, deadline(5_000)).catch(() => undefined);
}

export function stopFollowing(ctx: LeaseCtx): void {
  ctx.loop?.stop();
  ctx.loop = undefined;
}

/** Keep `leaseId` alive from now on (replacing any other loop). */
export function follow(ctx: LeaseCtx, leaseId: string): void {
  if (ctx.loop?.leaseId === leaseId) return;
  stopFollowing(ctx);
  const everyMs = (ctx.o.keepAliveEverySeconds ?? (ctx.o.ttlSeconds ?? 30) / 3) * 1000;
  ctx.loop = startKeepAlive({
    client: ctx.client,
    leaseId,
    everyMs,
    onLost: (id) => {
      if (ctx.loop?.leaseId === id) ctx.loop = undefined;
      ctx.o.onLost?.(id);
    },
    toMoltError,
  });
}

/** Keep the key's existing lease alive (by id: it may come from a previous agent); false if gone. */
export async function adopt(ctx: LeaseCtx, cur: LeaseRecord): Promise<boolean> {
  let ttl: number;
  try {
    ttl = await keepAliveOnce(ctx.client, cur.leaseId, ctx.timeoutMs, toMoltError);
  } catch (e) {
    throw toMoltError(e, `renewing lease ${cur.leaseId}`);
  }
  if (ttl <= 0) return false;
  follow(ctx, cur.leaseId);
  return true;
}
