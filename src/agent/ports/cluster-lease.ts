// SPDX-License-Identifier: Apache-2.0
/**
 * The cluster-wide control-plane upgrade lease (docs/adr/0004 §5): a TTL'd etcd key, so only one
 * control-plane machine upgrades at a time, held through the reboot until the node is healthy.
 */
export interface LeaseHolder {
  readonly holder: string;
  readonly operationId: string;
  /** ISO 8601. */
  readonly since: string;
}

export interface ClusterLease {
  /** Take the lease for this operation; succeeds if already ours; `MOLT_LEASE_HELD` otherwise. */
  acquire(operationId: string): Promise<void>;
  /** Move the key onto a lease long enough for a reboot; returns that lease's id. */
  extendForReboot(operationId: string): Promise<string>;
  /** After a reboot: keep the lease alive again (no-op if not ours). */
  resume(operationId: string, leaseId: string | undefined): Promise<void>;
  /** Delete the key if it holds this operation id. */
  release(operationId: string): Promise<void>;
  holder(): Promise<LeaseHolder | undefined>;
  close(): Promise<void>;
}
