// SPDX-License-Identifier: Apache-2.0
/** The four writes of the etcd cluster lease (see cluster-lease.ts for the model). */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { isTimeout } from '../../../platform/etcd/client.ts';
import { etcdCall, toMoltError } from './errors.ts';
import {
  adopt,
  follow,
  grant,
  held,
  mine,
  read,
  revokeQuietly,
  stopFollowing,
  type LeaseCtx,
} from './lease-ctx.ts';
import type { LeaseResume } from '../../ports/cluster-lease.ts';
import { createLease, deleteLease, moveLease, type LeaseRecord } from './lease-key.ts';

/**
 * Take the key on a new lease of `ttl`, or adopt it when it already holds this operation (a
 * restarted agent re-running AcquireLease). Returns the lease id now kept alive.
 */
export async function takeOrAdopt(
  ctx: LeaseCtx,
  operationId: string,
  ttl: number,
): Promise<string> {
  const cur = await read(ctx);
  if (cur !== undefined && !mine(ctx, cur, operationId)) throw held(cur);
  if (cur !== undefined && (await adopt(ctx, cur))) return cur.leaseId;
  const leaseId = await grant(ctx, ttl);
  const current = await create(ctx, operationId, leaseId);
  if (current !== undefined && current.leaseId === leaseId) {
    follow(ctx, leaseId);
    return leaseId;
  }
  await revokeQuietly(ctx, leaseId);
  if (current === undefined) return takeOrAdopt(ctx, operationId, ttl);
  if (mine(ctx, current, operationId) && (await adopt(ctx, current))) return current.leaseId;
  throw held(current);
}

/**
 * Create the key on `leaseId`; returns what the key holds afterwards (ours on `leaseId` when the
 * create happened). A timed-out create is settled by a linearizable re-read.
 */
async function create(
  ctx: LeaseCtx,
  operationId: string,
  leaseId: string,
): Promise<LeaseRecord | undefined> {
  const value = { holder: ctx.o.holder, operationId, since: new Date().toISOString() };
  try {
    const outcome = await createLease(ctx.client, { value, leaseId, timeoutMs: ctx.timeoutMs });
    return outcome.created ? { value, leaseId, modRevision: '' } : outcome.current;
  } catch (e) {
    if (!isTimeout(e)) throw toMoltError(e, 'acquiring the upgrade lease');
    const after = await read(ctx);
    if (after === undefined) throw toMoltError(e, 'acquiring the upgrade lease');
    return after;
  }
}

/** Move our key onto a fresh lease of `ttl` seconds (re-taking it if it expired); its id. */
export async function extend(ctx: LeaseCtx, operationId: string, ttl: number): Promise<string> {
  const cur = await read(ctx);
  if (cur === undefined) return takeOrAdopt(ctx, operationId, ttl);
  if (!mine(ctx, cur, operationId)) throw held(cur);
  const leaseId = await grant(ctx, ttl);
  let moved: boolean;
  try {
    moved = await moveLease(ctx.client, { from: cur, leaseId, timeoutMs: ctx.timeoutMs });
  } catch (e) {
    if (!isTimeout(e)) throw toMoltError(e, 'extending the upgrade lease');
    moved = (await read(ctx))?.leaseId === leaseId;
    if (!moved) throw toMoltError(e, 'extending the upgrade lease');
  }
  // etcd3 re-sends a call that failed in transit, including a move etcd had already applied; the
  // re-sent compare then fails although the key is on the new lease. Revoking that lease would
  // delete the key just before the reboot, so a failed compare is checked against the key first.
  if (!moved) moved = (await read(ctx))?.leaseId === leaseId;
  if (!moved) {
    await revokeQuietly(ctx, leaseId);
    throw new MoltError(
      ErrorCode.EtcdUnhealthy,
      'the upgrade lease changed while it was being extended',
      { retryable: true },
    );
  }
  follow(ctx, leaseId);
  // The old lease no longer carries the key; revoking it only stops it lingering.
  await revokeQuietly(ctx, cur.leaseId);
  return leaseId;
}

/**
 * After a reboot or a lost keep-alive: keep our key's lease alive by its id. If the key expired it
 * is taken again when free; the upgrade continues either way (docs/adr/0004 §5), and the caller
 * is told which, so a key now held by another machine is reported rather than ignored.
 */
export async function resumeOrRetake(
  ctx: LeaseCtx,
  operationId: string,
  ttl: number,
): Promise<LeaseResume> {
  const cur = await read(ctx);
  if (cur !== undefined && !mine(ctx, cur, operationId))
    return { outcome: 'held', holder: cur.value };
  if (cur !== undefined && (await adopt(ctx, cur))) return { outcome: 'kept' };
  try {
    await takeOrAdopt(ctx, operationId, ttl);
    return { outcome: 'retaken' };
  } catch (e) {
    if (!(e instanceof MoltError && e.code === ErrorCode.LeaseHeld)) throw e;
    const now = await read(ctx);
    if (now === undefined) throw e;
    return { outcome: 'held', holder: now.value };
  }
}

/** Delete the key if it holds this operation, then revoke its lease. */
export async function release(ctx: LeaseCtx, operationId: string): Promise<void> {
  const followed = ctx.loop?.leaseId;
  stopFollowing(ctx);
  const cur = await read(ctx);
  if (cur !== undefined && mine(ctx, cur, operationId)) {
    try {
      await etcdCall(
        'releasing the upgrade lease',
        deleteLease(ctx.client, { from: cur, timeoutMs: ctx.timeoutMs }),
      );
    } catch (e) {
      if (!isTimeout(e)) throw e;
      const after = await read(ctx);
      if (after !== undefined && mine(ctx, after, operationId)) throw e;
    }
    await revokeQuietly(ctx, cur.leaseId);
  }
  if (followed !== undefined && followed !== cur?.leaseId) await revokeQuietly(ctx, followed);
}
