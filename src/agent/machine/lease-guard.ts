// SPDX-License-Identifier: Apache-2.0
/**
 * The cluster lease as the runner uses it (docs/adr/0004 §5): every call goes through one queue,
 * so a re-take after a lost keep-alive can never interleave with the operation's own lease steps.
 * Without it, a loss noticed while `ReleaseLease` runs could re-create the key after the release —
 * a lease kept alive by this agent for no operation, blocking every other control-plane upgrade.
 */
import type { UpgradeState } from '../../core/upgrade/state.ts';
import { holdsLease } from '../../core/upgrade/transition.ts';
import type { ClusterLease, LeaseResume } from '../ports/cluster-lease.ts';
import type { EventLog } from './events.ts';
import { stepError } from './submit.ts';

export interface GuardedLease extends ClusterLease {
  /**
   * Take the lease up again after a loss, unless `operationId` already released it (then
   * `undefined`): keeps our key, re-takes a free one, or reports who holds it now.
   */
  retake(operationId: string): Promise<LeaseResume | undefined>;
}

export function guardLease(lease: ClusterLease): GuardedLease {
  let queue: Promise<unknown> = Promise.resolve();
  const released = new Set<string>();
  const serial = <T>(step: () => Promise<T>): Promise<T> => {
    const next = queue.then(step, step);
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    acquire: (op) =>
      serial(async () => {
        released.delete(op);
        await lease.acquire(op);
      }),
    extendForReboot: (op) => serial(() => lease.extendForReboot(op)),
    resume: (op, leaseId) => serial(() => lease.resume(op, leaseId)),
    release: (op) =>
      serial(async () => {
        released.add(op);
        await lease.release(op);
      }),
    retake: (op) =>
      serial(() => (released.has(op) ? Promise.resolve(undefined) : lease.resume(op, undefined))),
    holder: () => lease.holder(),
    onLost: (listener) => {
      lease.onLost(listener);
    },
    close: () => lease.close(),
  };
}

/** The journal line for what a resume or re-take found. */
export function describeResume(r: LeaseResume, after: string): string {
  switch (r.outcome) {
    case 'kept':
      return `upgrade lease kept alive ${after}`;
    case 'retaken':
      return `upgrade lease had expired ${after}; taken again`;
    case 'held':
      return `warning: upgrade lease is held by ${r.holder.holder} for operation ${r.holder.operationId} (since ${r.holder.since}) ${after}: another control-plane upgrade may be running beside this one`;
  }
}

/**
 * The lease keep-alive does not survive a reboot or restart, and is lost when etcd is out of
 * reach for a TTL: `resume` takes it up again while the state holds it, and journals what was
 * found — a key now held by another machine above all; `onLost` does so after a loss.
 */
export function leaseResumer(
  lease: GuardedLease | undefined,
  events: EventLog,
  state: () => UpgradeState,
): { resume: (after: string) => Promise<void>; onLost: (leaseId: string) => void } {
  async function resume(after: string): Promise<void> {
    const s = state();
    if (!holdsLease(s) || s.op === undefined || lease === undefined) return;
    let message: string;
    try {
      const found = await lease.retake(s.op.id);
      if (found === undefined) return;
      message = describeResume(found, after);
    } catch (error) {
      message = `upgrade lease not resumed ${after}: ${stepError(error).message}`;
    }
    await events.emit(state(), { kind: 'log', status: 'info', message });
  }
  return {
    resume,
    onLost: (leaseId) => {
      if (!holdsLease(state())) return;
      void events
        .emit(state(), {
          kind: 'log',
          status: 'info',
          message: `warning: upgrade lease ${leaseId} expired while held (etcd out of reach for a TTL)`,
        })
        .then(() => resume('after the loss'))
        .catch(() => undefined);
    },
  };
}
