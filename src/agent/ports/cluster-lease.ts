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

/**
 * What {@link ClusterLease.resume} found: our key still alive (`kept`), our key gone and taken
 * again (`retaken`), or the key held by someone else (`held`) — then another control-plane
 * upgrade may be running beside ours, which the runner must say loudly.
 */
export type LeaseResume =
  | { readonly outcome: 'kept' | 'retaken' }
  | { readonly outcome: 'held'; readonly holder: LeaseHolder };

export interface ClusterLease {
  /** Take the lease for this operation; succeeds if already ours; `MOLT_LEASE_HELD` otherwise. */
  acquire(operationId: string): Promise<void>;
  /** Move the key onto a lease long enough for a reboot; returns that lease's id. */
  extendForReboot(operationId: string): Promise<string>;
  /** After a reboot or a loss: keep our key alive again, or take it again when it is free. */
  resume(operationId: string, leaseId: string | undefined): Promise<LeaseResume>;
  /** Delete the key if it holds this operation id. */
  release(operationId: string): Promise<void>;
  holder(): Promise<LeaseHolder | undefined>;
  /**
   * Call `listener` whenever the lease this holder keeps alive is found gone (its key expired:
   * etcd was out of reach for longer than the TTL). The holder no longer renews anything then.
   */
  onLost(listener: (leaseId: string) => void): void;
  close(): Promise<void>;
}
