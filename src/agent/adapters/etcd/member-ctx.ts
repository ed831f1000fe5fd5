// SPDX-License-Identifier: Apache-2.0
/** Options and shared lookups of the etcd member adapter (see etcd-member.ts). */
import type { IMember } from 'etcd3';
import type { Services } from '../../ports/services.ts';
import { findSelf, listMembers } from './member-probe.ts';

/**
 * The service that runs the local etcd. `disable`/`enable`, when present, keep a plain
 * `startAll` (StartServices) from starting a member that left the cluster until it rejoins.
 */
export interface MemberService extends Services {
  disable?(): Promise<void>;
  enable?(): Promise<void>;
}

/** Options for `createEtcdMember`. */
export interface EtcdMemberOptions {
  /** This member's name (the node name). */
  readonly name: string;
  readonly peerUrl: string;
  readonly clientUrl: string;
  /** Client URLs of all members, this one included. */
  readonly endpoints: readonly string[];
  /** Starts and stops the local etcd process; reads the join spec (join-spec.ts) when it starts. */
  readonly service: MemberService;
  readonly dataDir: string;
  /** Deadline of each etcd request and of each member's quorum read. @default 5000 */
  readonly requestTimeoutMs?: number;
  /** How far (raft entries) behind the leader a member may be and still count as caught up. @default 1000 */
  readonly raftLagMargin?: number;
  /** How long a rejoin may take until the member is healthy. @default 60000 */
  readonly rejoinTimeoutMs?: number;
}

export interface MemberCtx extends EtcdMemberOptions {
  readonly timeoutMs: number;
}

/**
 * The endpoints to send cluster calls to: the others first, since this member is usually the one
 * stopped (LeaveEtcd runs after StopServices).
 */
export function peersFirst(ctx: MemberCtx): string[] {
  const others = ctx.endpoints.filter((e) => e !== ctx.clientUrl);
  return others.length > 0 ? others : [...ctx.endpoints];
}

export async function lookup(
  ctx: MemberCtx,
): Promise<{ members: IMember[]; me: IMember | undefined }> {
  const members = await listMembers(peersFirst(ctx), ctx.timeoutMs);
  return { members, me: findSelf(members, ctx.name, ctx.peerUrl) };
}
