// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ClusterLease} on etcd (docs/adr/0004 §5): `/molt/v1/locks/control-plane-upgrade` holds
 * `{holder, operationId, since}` on an etcd lease this agent keeps alive. A holder that dies stops
 * renewing and the key expires at the TTL; before a reboot the key moves onto a lease long enough
 * to survive it, and the next boot keeps that lease alive again by its id.
 *
 * Indeterminate writes: a transaction that hits its deadline may still commit (etcd-harness test),
 * so a timed-out create, move or delete is followed by a linearizable re-read and reported by what
 * the key then says; if even the re-read fails, the call fails with `MOLT_TIMED_OUT` and the
 * unknown write cleans itself up when its lease expires.
 */
import type { ClusterLease, LeaseHolder } from '../../ports/cluster-lease.ts';
import { openClient } from '../../../platform/etcd/client.ts';
import { read, stopFollowing, type EtcdClusterLeaseOptions, type LeaseCtx } from './lease-ctx.ts';
import { extend, release, resumeOrRetake, takeOrAdopt } from './lease-ops.ts';

export type { EtcdClusterLeaseOptions } from './lease-ctx.ts';
export { LeaseKey } from './lease-key.ts';

/** The etcd-backed cluster lease; passes `testkit/cluster-lease-conformance.ts`. */
export function createEtcdClusterLease(o: EtcdClusterLeaseOptions): ClusterLease {
  const listeners: ((leaseId: string) => void)[] = [];
  const ctx: LeaseCtx = {
    o: {
      ...o,
      onLost: (leaseId) => {
        o.onLost?.(leaseId);
        for (const l of listeners) l(leaseId);
      },
    },
    client: openClient(o.endpoints),
    timeoutMs: o.requestTimeoutMs ?? 5_000,
    loop: undefined,
  };
  const rebootTtl = o.rebootTtlSeconds ?? 600;
  return {
    acquire: async (operationId) => {
      await takeOrAdopt(ctx, operationId, o.ttlSeconds ?? 30);
    },
    extendForReboot: (operationId) => extend(ctx, operationId, rebootTtl),
    // The key in etcd, not the journal's `leaseId`, says which lease carries it now.
    resume: (operationId) => resumeOrRetake(ctx, operationId, rebootTtl),
    release: (operationId) => release(ctx, operationId),
    holder: async (): Promise<LeaseHolder | undefined> => (await read(ctx))?.value,
    onLost: (listener) => {
      listeners.push(listener);
    },
    close: () => {
      // Only stop renewing: the key stays until its TTL, so a restarted agent can resume it.
      stopFollowing(ctx);
      ctx.client.close();
      return Promise.resolve();
    },
  };
}

/** The cluster lease of a control-plane machine, from its config (lab and real machines alike). */
export function clusterLeaseOf(config: {
  readonly node: string;
  readonly leaseTtlSeconds: number;
  readonly rebootLeaseSeconds: number;
  readonly etcd: { readonly endpoints: readonly string[] };
}): ClusterLease {
  return createEtcdClusterLease({
    endpoints: config.etcd.endpoints,
    holder: config.node,
    ttlSeconds: config.leaseTtlSeconds,
    rebootTtlSeconds: config.rebootLeaseSeconds,
  });
}
