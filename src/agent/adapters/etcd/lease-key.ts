// SPDX-License-Identifier: Apache-2.0
/**
 * The control-plane upgrade lease key and the three atomic operations on it (docs/adr/0004 §5).
 * Every write is a compare-and-swap, and every molt key is attached to an etcd lease, so a write
 * whose outcome is unknown (deadline without quorum) cleans itself up at the lease's TTL.
 */
import type { Etcd3 } from 'etcd3';
import type { LeaseHolder } from '../../ports/cluster-lease.ts';
import { deadline } from '../../../platform/etcd/client.ts';

/** The key every control-plane agent contends for. */
export const LeaseKey = '/molt/v1/locks/control-plane-upgrade';

/** The key as read: who holds it, on which etcd lease, at which revision. */
export interface LeaseRecord {
  readonly value: LeaseHolder;
  readonly leaseId: string;
  readonly modRevision: string;
}

export function encodeHolder(value: LeaseHolder): string {
  return JSON.stringify({
    holder: value.holder,
    operationId: value.operationId,
    since: value.since,
  });
}

/** Parse the key's value; a value molt did not write still names "a holder", never nobody. */
export function decodeHolder(text: string): LeaseHolder {
  try {
    const v = JSON.parse(text) as Partial<Record<keyof LeaseHolder, unknown>>;
    if (
      typeof v.holder === 'string' &&
      typeof v.operationId === 'string' &&
      typeof v.since === 'string'
    )
      return { holder: v.holder, operationId: v.operationId, since: v.since };
  } catch {
    // fall through
  }
  return { holder: 'unknown', operationId: 'unknown', since: '' };
}

function toRecord(
  kv: { value: Buffer; lease: string; mod_revision: string } | undefined,
): LeaseRecord | undefined {
  if (kv === undefined) return undefined;
  return {
    value: decodeHolder(kv.value.toString('utf8')),
    leaseId: kv.lease,
    modRevision: kv.mod_revision,
  };
}

/** Linearizable read of the key. */
export async function readLease(
  client: Etcd3,
  timeoutMs: number,
): Promise<LeaseRecord | undefined> {
  const res = await client.get(LeaseKey).options(deadline(timeoutMs)).exec();
  return toRecord(res.kvs[0]);
}

/** Create the key on `leaseId` if absent; otherwise return who holds it (one transaction). */
export async function createLease(
  client: Etcd3,
  a: { readonly value: LeaseHolder; readonly leaseId: string; readonly timeoutMs: number },
): Promise<
  | { readonly created: true }
  | { readonly created: false; readonly current: LeaseRecord | undefined }
> {
  const res = await client
    .if(LeaseKey, 'Create', '==', 0)
    .then(client.put(LeaseKey).value(encodeHolder(a.value)).lease(a.leaseId))
    .else(client.get(LeaseKey))
    .options(deadline(a.timeoutMs))
    .commit();
  if (res.succeeded) return { created: true };
  return { created: false, current: toRecord(res.responses[0]?.response_range.kvs[0]) };
}

/** Re-put the key, unchanged since `from`, onto `leaseId`; false if it changed meanwhile. */
export async function moveLease(
  client: Etcd3,
  a: { readonly from: LeaseRecord; readonly leaseId: string; readonly timeoutMs: number },
): Promise<boolean> {
  const res = await client
    .if(LeaseKey, 'Mod', '==', a.from.modRevision)
    .then(client.put(LeaseKey).value(encodeHolder(a.from.value)).lease(a.leaseId))
    .options(deadline(a.timeoutMs))
    .commit();
  return res.succeeded;
}

/** Delete the key if unchanged since `from`; false if it changed meanwhile. */
export async function deleteLease(
  client: Etcd3,
  a: { readonly from: LeaseRecord; readonly timeoutMs: number },
): Promise<boolean> {
  const res = await client
    .if(LeaseKey, 'Mod', '==', a.from.modRevision)
    .then(client.delete().key(LeaseKey))
    .options(deadline(a.timeoutMs))
    .commit();
  return res.succeeded;
}
