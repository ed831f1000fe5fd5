// SPDX-License-Identifier: Apache-2.0
/**
 * {@link EtcdMember} on a real etcd cluster (docs/adr/0004 §5): the quorum check before a
 * control-plane node goes down, leaving the cluster (`member remove`) before a wipe, and rejoining
 * as a learner that is promoted once caught up.
 */
import { ErrorCode } from '../../../core/errors.ts';
import type { EtcdMember, MemberHealth, QuorumReport } from '../../ports/etcd-member.ts';
import { toMoltError } from './errors.ts';
import { lookup, type EtcdMemberOptions, type MemberCtx } from './member-ctx.ts';
import { leave, rejoin } from './membership.ts';
import { probeAll, probeMember } from './member-probe.ts';
import { judgeQuorum } from '../../ports/etcd-quorum.ts';

export type { EtcdMemberOptions } from './member-ctx.ts';

export function createEtcdMember(options: EtcdMemberOptions): EtcdMember {
  const ctx: MemberCtx = { ...options, timeoutMs: options.requestTimeoutMs ?? 5_000 };
  return {
    checkQuorum: (o) => checkQuorum(ctx, o),
    leave: () => leave(ctx),
    rejoin: (o) => rejoin(ctx, o, () => memberHealth(ctx)),
    healthy: () => memberHealth(ctx),
  };
}

async function checkQuorum(
  ctx: MemberCtx,
  o: { preserve: boolean; force: boolean },
): Promise<QuorumReport> {
  let members;
  try {
    members = (await lookup(ctx)).members;
  } catch (e) {
    const error = toMoltError(e, 'listing members');
    return { members: [], ok: false, code: ErrorCode.EtcdUnhealthy, reason: error.message };
  }
  const probed = await probeAll(members, ctx.timeoutMs);
  const report = judgeQuorum({ self: ctx.name, members: probed, ...o });
  // Probes carry raft details healthy() needs; the report shows only the port's fields.
  return {
    ...report,
    members: probed.map(({ name, id, healthy, learner, message }) => ({
      name,
      id,
      healthy,
      learner,
      ...(message === undefined ? {} : { message }),
    })),
  };
}

/** Started, serving linearizable reads, not a learner, and within the margin of the leader's raft index. */
async function memberHealth(ctx: MemberCtx): Promise<MemberHealth> {
  const { members, me } = await lookup(ctx);
  if (me === undefined)
    return {
      name: ctx.name,
      id: '',
      healthy: false,
      learner: false,
      message: 'not a member of the cluster',
    };
  const mine = await probeMember(me, ctx.timeoutMs);
  const { name, id, learner } = mine;
  if (mine.raftIndex === undefined || mine.leaderId === undefined)
    return { name, id, learner, healthy: false, message: mine.message ?? 'unreachable' };
  const leader = members.find((m) => m.ID === mine.leaderId);
  const leaderProbe =
    leader === undefined || leader.ID === me.ID ? mine : await probeMember(leader, ctx.timeoutMs);
  if (leaderProbe.raftIndex === undefined)
    return { name, id, learner, healthy: false, message: 'no reachable leader' };
  const lag = leaderProbe.raftIndex - mine.raftIndex;
  const margin = ctx.raftLagMargin ?? 1000;
  if (lag > margin)
    return {
      name,
      id,
      learner,
      healthy: false,
      message: `${lag} raft entries behind the leader (margin ${margin})`,
    };
  return mine.healthy
    ? { name, id, learner, healthy: true }
    : { name, id, learner, healthy: false, message: mine.message ?? 'unhealthy' };
}
