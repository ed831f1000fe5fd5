// SPDX-License-Identifier: Apache-2.0
/**
 * {@link FleetLockStore} on etcd v3 (STYLE §7, airlock's `internal/lock/lock.go` shape): one key
 * per group, `/molt/v1/fleetlock/<group>`, holding `{"slots":N,"holders":[…],"expires":{id: ms}}`
 * (`expires` absent when no slot has one: records from before slots expired read as they were). A
 * write is a
 * transaction guarded on the key's mod revision, or on its create revision being 0 when the group
 * was never written, so a lost race is a `false`, never a lost update. The revision handed out is
 * the key's mod revision (`'0'` when absent).
 *
 * No etcd lease is attached: a FleetLock slot must outlive the holder's reboot and the operator's
 * restart. Slots expire by the time recorded in the value instead (`core/fleetlock`'s `recover`),
 * freed by the next request to the group — an etcd lease would expire with the *operator*.
 */
import type { Etcd3 } from 'etcd3';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { GROUP_PATTERN, type Semaphore } from '../../../core/fleetlock/semaphore.ts';
import { deadline, etcdErrors, openClient } from '../../../platform/etcd/client.ts';
import type { FleetLockRead, FleetLockStore } from '../../ports/fleetlock-store.ts';

/**
 * etcd3's errors as molt's (STYLE §4.4). A timeout carries no hint: the FleetLock endpoint answers
 * it in the protocol's own error shape, which has no place for one.
 */
const { etcdCall } = etcdErrors();

/** Where the semaphores live. */
export const FLEETLOCK_PREFIX = '/molt/v1/fleetlock/';

/** Options of {@link EtcdFleetLockStore}. */
export interface EtcdFleetLockStoreOptions {
  /** Client URLs (`http://host:port`). */
  readonly endpoints: readonly string[];
  /** Deadline of one etcd request. @default 5000 */
  readonly requestTimeoutMs?: number;
}

/** The key of `group`; refuses names outside the protocol's pattern (they could alias keys). */
export function fleetLockKey(group: string): string {
  if (!GROUP_PATTERN.test(group))
    throw new MoltError(ErrorCode.BadInput, `'${group}' is not a FleetLock group name`);
  return FLEETLOCK_PREFIX + group;
}

export class EtcdFleetLockStore implements FleetLockStore {
  private readonly client: Etcd3;
  private readonly timeoutMs: number;

  constructor(options: EtcdFleetLockStoreOptions) {
    this.client = openClient(options.endpoints);
    this.timeoutMs = options.requestTimeoutMs ?? 5_000;
  }

  async read(group: string): Promise<FleetLockRead> {
    const key = fleetLockKey(group);
    const res = await etcdCall(`read ${key}`, this.client.get(key).options(this.deadline()).exec());
    const kv = res.kvs[0];
    if (kv === undefined) return { sem: undefined, revision: '0' };
    return { sem: decodeSemaphore(key, kv.value.toString('utf8')), revision: kv.mod_revision };
  }

  async write(group: string, sem: Semaphore, expectedRevision: string): Promise<boolean> {
    const key = fleetLockKey(group);
    const txn =
      expectedRevision === '0'
        ? this.client.if(key, 'Create', '==', 0)
        : this.client.if(key, 'Mod', '==', expectedRevision);
    const res = await etcdCall(
      `write ${key}`,
      txn
        .then(this.client.put(key).value(encodeSemaphore(sem)))
        .options(this.deadline())
        .commit(),
    );
    return res.succeeded;
  }

  close(): Promise<void> {
    this.client.close();
    return Promise.resolve();
  }

  private deadline(): { readonly deadline: number } {
    return deadline(this.timeoutMs);
  }
}

/** The stored form; fields in a fixed order so equal semaphores are equal bytes. */
export function encodeSemaphore(sem: Semaphore): string {
  return JSON.stringify({
    slots: sem.slots,
    holders: sem.holders,
    ...(sem.expires !== undefined && { expires: sem.expires }),
  });
}

/**
 * Parse a stored value. One molt did not write is an error, never "no holders": reading it as
 * empty would hand out slots that somebody may hold.
 */
export function decodeSemaphore(key: string, text: string): Semaphore {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = undefined;
  }
  const o = (typeof v === 'object' && v !== null ? v : {}) as Partial<Record<string, unknown>>;
  const { slots, holders, expires } = o;
  if (
    typeof slots === 'number' &&
    Number.isSafeInteger(slots) &&
    slots >= 0 &&
    Array.isArray(holders) &&
    holders.every((h): h is string => typeof h === 'string' && h !== '') &&
    new Set(holders).size === holders.length &&
    validExpiries(expires, holders)
  )
    return expires === undefined ? { slots, holders } : { slots, holders, expires };
  throw new MoltError(ErrorCode.Internal, `${key} does not hold a semaphore molt wrote`, {
    hint: `inspect it with \`etcdctl get ${key}\`; delete it to reset the group`,
  });
}

/** Expiries, when present: whole epoch ms, each for one of the holders. */
function validExpiries(
  expires: unknown,
  holders: readonly string[],
): expires is Record<string, number> | undefined {
  if (expires === undefined) return true;
  if (typeof expires !== 'object' || expires === null || Array.isArray(expires)) return false;
  return Object.entries(expires).every(
    ([id, at]) => holders.includes(id) && Number.isSafeInteger(at) && (at as number) >= 0,
  );
}
