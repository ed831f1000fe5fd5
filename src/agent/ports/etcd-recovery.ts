// SPDX-License-Identifier: Apache-2.0
/**
 * etcd when the cluster is in trouble (docs/adr/0012 §6), on a control-plane machine: the member
 * list as this member sees it, a snapshot of its data, leadership handed over, a member removed,
 * and the two ways back — restore this member from a snapshot as a new one-member cluster, or
 * rejoin the live cluster as a new member. Restore and rejoin stop the machine's components and
 * etcd first and start them after; they move the old data directory aside, never delete it.
 */
import type { EtcdMemberView, ForfeitAnswer } from '../../protocol/agent-kubernetes.ts';

export type { EtcdMemberView, ForfeitAnswer };

export interface EtcdRecovery {
  /** The members with leader and learner flags; answers without quorum (from a member's own view). */
  members(): Promise<EtcdMemberView[]>;
  /**
   * A snapshot of this member's data as bytes, what `etcdctl snapshot save` writes; the stream
   * ends at its deadline or when `signal` aborts. Resolves once the first bytes came.
   * @throws MoltError `MOLT_ETCD_UNHEALTHY` when this member does not serve it.
   */
  snapshot(signal: AbortSignal): Promise<AsyncIterable<Uint8Array>>;
  /** Hand leadership to `to` (hex id) or the most caught-up other voter, when this member leads. */
  forfeitLeadership(to?: string): Promise<ForfeitAnswer>;
  /**
   * Remove a member by hex id; the members after. `MOLT_BAD_INPUT` (not an id),
   * `MOLT_ETCD_MEMBER_NOT_FOUND`, `MOLT_QUORUM_AT_RISK` (the last voter).
   */
  removeMember(id: string): Promise<EtcdMemberView[]>;
  /**
   * Restore the snapshot file as a new one-member cluster of this member (a new cluster token),
   * then start etcd and the components. The file is checked before anything stops
   * (`MOLT_ETCD_SNAPSHOT_INVALID`, `MOLT_TOOL_MISSING` without etcdutl).
   */
  restore(file: string): Promise<EtcdMemberView[]>;
  /** Join the cluster the other members serve as a new member, then start the components. */
  rejoin(): Promise<EtcdMemberView[]>;
}
