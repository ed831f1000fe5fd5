// SPDX-License-Identifier: Apache-2.0
/**
 * The quorum rules of docs/adr/0004 §5 (part of the `EtcdMember` contract, shared by the
 * adapter and the fake), as a pure judgement over probed members: may this member
 * be taken down (and, with `preserve: false`, removed) without losing the cluster?
 *
 * | situation | answer |
 * |---|---|
 * | this member missing, unstarted or unreachable | `MOLT_ETCD_UNHEALTHY` |
 * | another member unstarted, a learner or failing its linearizable read | `MOLT_QUORUM_AT_RISK` |
 * | 2 voting members | `MOLT_QUORUM_AT_RISK` unless `force` |
 * | 1 member | allowed with `preserve: true` (downtime, data kept), else `MOLT_QUORUM_AT_RISK` |
 * | otherwise | allowed |
 */
import { ErrorCode } from '../../core/errors.ts';
import type { MemberHealth, QuorumReport } from './etcd-member.ts';

export interface QuorumInput {
  readonly self: string;
  readonly members: readonly MemberHealth[];
  readonly preserve: boolean;
  readonly force: boolean;
}

const refuse = (members: readonly MemberHealth[], code: string, reason: string): QuorumReport => ({
  members,
  ok: false,
  code,
  reason,
});

const describe = (m: MemberHealth): string =>
  `${m.name} (${m.learner ? 'learner' : (m.message ?? 'unhealthy')})`;

export function judgeQuorum(input: QuorumInput): QuorumReport {
  const { members, self } = input;
  const me = members.find((m) => m.name === self);
  if (me === undefined)
    return refuse(
      members,
      ErrorCode.EtcdUnhealthy,
      `${self} is not a started member of the etcd cluster`,
    );
  const others = members.filter((m) => m !== me && (!m.healthy || m.learner));
  const n = members.length;
  if (others.length > 0)
    return refuse(
      members,
      ErrorCode.QuorumAtRisk,
      `not every etcd member is healthy: ${others.map(describe).join(', ')}; taking ${self} down too would leave ${n - others.length - 1} of ${n}`,
    );
  if (!me.healthy || me.learner)
    return refuse(members, ErrorCode.EtcdUnhealthy, `this member is not healthy: ${describe(me)}`);
  if (n === 2 && !input.force)
    return refuse(
      members,
      ErrorCode.QuorumAtRisk,
      `a 2-member etcd cluster has no quorum while ${self} is down; pass force to accept that`,
    );
  if (n === 1 && !input.preserve)
    return refuse(
      members,
      ErrorCode.QuorumAtRisk,
      `${self} is the only etcd member: preserve: false would discard the cluster's data`,
    );
  return { members, ok: true };
}
