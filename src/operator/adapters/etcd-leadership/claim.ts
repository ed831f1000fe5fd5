// SPDX-License-Identifier: Apache-2.0
/**
 * The leader key and the etcd calls on it: read, create-if-absent on a lease, delete-if-ours, and
 * one keep-alive of the lease by id. The key always lives on an etcd lease, so a claim nobody
 * renews (a dead operator, or a create whose answer was lost) disappears at the lease's TTL.
 */
import type { Etcd3 } from 'etcd3';
import { deadline } from '../../../platform/etcd/client.ts';
import { keepAliveOnce as keepLeaseAlive } from '../../../platform/etcd/keep-alive.ts';
import { etcdCall, toMoltError } from '../etcd-store/errors.ts';

/** One leadership instance's connection to etcd. */
export interface ClaimCtx {
  readonly client: Etcd3;
  readonly key: string;
  readonly id: string;
  readonly timeoutMs: number;
}

/** The key as read: who leads, on which etcd lease. */
export interface Claim {
  /** The leader's id; a value molt did not write is shown as it is. */
  readonly id: string;
  readonly leaseId: string;
}

export function encodeClaim(id: string, since: Date): string {
  return JSON.stringify({ id, since: since.toISOString() });
}

function decodeClaim(text: string): string {
  try {
    const v = JSON.parse(text) as { id?: unknown };
    if (typeof v.id === 'string') return v.id;
  } catch {
    // not ours: show it raw
  }
  return text;
}

/** Linearizable read of the leader key. */
export async function readClaim(ctx: ClaimCtx): Promise<Claim | undefined> {
  const res = await etcdCall(
    'reading the operator leader key',
    ctx.client.get(ctx.key).options(deadline(ctx.timeoutMs)).exec(),
  );
  const kv = res.kvs[0];
  return kv === undefined ? undefined : { id: decodeClaim(kv.value.toString()), leaseId: kv.lease };
}

export async function grant(ctx: ClaimCtx, ttlSeconds: number): Promise<string> {
  const res = await etcdCall(
    'granting a leader lease',
    ctx.client.leaseClient.leaseGrant({ TTL: ttlSeconds }, deadline(ctx.timeoutMs)),
  );
  return res.ID;
}

/** Put our claim on `leaseId` if the key is absent; true when it was created. */
export async function createClaim(ctx: ClaimCtx, leaseId: string): Promise<boolean> {
  const res = await ctx.client
    .if(ctx.key, 'Create', '==', 0)
    .then(ctx.client.put(ctx.key).value(encodeClaim(ctx.id, new Date())).lease(leaseId))
    .options(deadline(ctx.timeoutMs))
    .commit();
  return res.succeeded;
}

/** Delete the key only while it is on `leaseId` (ours). */
export async function deleteClaim(ctx: ClaimCtx, leaseId: string): Promise<void> {
  await ctx.client
    .if(ctx.key, 'Lease', '==', leaseId)
    .then(ctx.client.delete().key(ctx.key))
    .options(deadline(ctx.timeoutMs))
    .commit();
}

/**
 * Revoke with its own bounded deadline, independent of any caller's: a release must not hang on
 * a dead etcd, and a failure only means the lease (and a key on it) lives until its TTL.
 */
export async function revokeQuietly(ctx: ClaimCtx, leaseId: string): Promise<void> {
  await ctx.client.leaseClient
    .leaseRevoke({ ID: leaseId }, deadline(Math.min(ctx.timeoutMs, 5_000)))
    .catch(() => undefined);
}

/**
 * Renew `leaseId` once by its id (a raw `LeaseKeepAlive`, `platform/etcd/keep-alive.ts`); resolves
 * with the remaining TTL (0: the lease is gone).
 */
export function keepAliveOnce(ctx: ClaimCtx, leaseId: string): Promise<number> {
  return keepLeaseAlive(ctx.client, leaseId, ctx.timeoutMs, toMoltError);
}
