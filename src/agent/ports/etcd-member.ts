// SPDX-License-Identifier: Apache-2.0
/** This machine's etcd member and the cluster's quorum (docs/adr/0004 §5). */
export interface MemberHealth {
  readonly name: string;
  readonly id: string;
  readonly healthy: boolean;
  readonly learner: boolean;
  readonly message?: string;
}

export interface QuorumReport {
  readonly members: readonly MemberHealth[];
  readonly ok: boolean;
  /** Why taking this member down is refused (`MOLT_QUORUM_AT_RISK` / `MOLT_ETCD_UNHEALTHY`). */
  readonly code?: string;
  readonly reason?: string;
}

export interface EtcdMember {
  /** Would taking this member down keep quorum? (never throws for an unhealthy cluster: reports it) */
  checkQuorum(options: {
    readonly preserve: boolean;
    readonly force: boolean;
  }): Promise<QuorumReport>;
  /** Remove this member from the cluster; idempotent (looks itself up by name and peer URL first). */
  leave(): Promise<void>;
  /** Start the local member again; as a new member (learner, then promoted) after leave or wipe. */
  rejoin(options: { readonly asNewMember: boolean }): Promise<void>;
  /** This member is started, healthy and caught up with the leader. */
  healthy(): Promise<MemberHealth>;
}
