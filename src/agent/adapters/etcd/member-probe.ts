// SPDX-License-Identifier: Apache-2.0
/**
 * Looking at etcd members one by one: the member list, and a probe through each member's own
 * client URL (a linearizable read proves that member is connected to a quorum *now*; the status
 * call gives its raft index and leader).
 */
import type { IMember } from 'etcd3';
import type { MemberHealth } from '../../ports/etcd-member.ts';
import { deadline, withClient } from '../../../platform/etcd/client.ts';
import { etcdCall } from './errors.ts';
import { errorMessage } from '../../../core/errors.ts';

/** A member as probed, with what healthy() needs beyond {@link MemberHealth}. */
export interface ProbedMember extends MemberHealth {
  readonly raftIndex?: number;
  readonly leaderId?: string;
}

/** The key read by probes; it need not exist (a linearizable read of nothing still needs quorum). */
const ProbeKey = '/molt/v1/health-probe';

/** A member's display name: its name, or its peer URL while it has not started. */
export function memberName(m: IMember): string {
  return m.name !== '' ? m.name : `(unstarted ${m.peerURLs[0] ?? m.ID})`;
}

/**
 * The member list. etcd 3.4 answers `MemberList` from the local member's state (3.5 added a
 * linearizable option), so a linearizable read through the same client comes first: it makes
 * that member apply everything committed so far, including a just-committed add or remove.
 */
export async function listMembers(
  endpoints: readonly string[],
  timeoutMs: number,
): Promise<IMember[]> {
  const res = await withClient(endpoints, async (c) => {
    await etcdCall('reading through a quorum', c.get(ProbeKey).options(deadline(timeoutMs)).exec());
    return etcdCall('listing members', c.cluster.memberList({}, deadline(timeoutMs)));
  });
  return res.members;
}

/** Find this machine's member by name or peer URL (an unstarted member has no name yet). */
export function findSelf(
  members: readonly IMember[],
  name: string,
  peerUrl: string,
): IMember | undefined {
  return members.find((m) => m.name === name || m.peerURLs.includes(peerUrl));
}

/** Probe one member through its client URL within `timeoutMs`; never throws. */
export async function probeMember(m: IMember, timeoutMs: number): Promise<ProbedMember> {
  const base = { name: memberName(m), id: m.ID, learner: m.isLearner };
  const url = m.clientURLs[0];
  if (m.name === '' || url === undefined)
    return { ...base, healthy: false, message: 'not started' };
  try {
    return await withClient([url], async (c) => {
      const status = await c.maintenance.status(deadline(timeoutMs));
      // A learner serves no linearizable reads; it is never healthy for quorum anyway.
      if (!m.isLearner) await c.get(ProbeKey).options(deadline(timeoutMs)).exec();
      const errors = status.errors.join('; ');
      return {
        ...base,
        healthy: !m.isLearner && errors === '',
        raftIndex: Number(status.raftIndex),
        leaderId: status.leader,
        ...(m.isLearner ? { message: 'learner' } : errors === '' ? {} : { message: errors }),
      };
    });
  } catch (e) {
    return {
      ...base,
      healthy: false,
      message: `unreachable at ${url}: ${errorMessage(e)}`,
    };
  }
}

/** Probe every member in parallel. */
export function probeAll(members: readonly IMember[], timeoutMs: number): Promise<ProbedMember[]> {
  return Promise.all(members.map((m) => probeMember(m, timeoutMs)));
}
