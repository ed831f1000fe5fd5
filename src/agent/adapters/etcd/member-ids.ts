// SPDX-License-Identifier: Apache-2.0
/**
 * etcd member ids as people see them (hex, as `etcdctl member list` prints) and as etcd3 carries
 * them (decimal strings of a uint64), and the member view the agent's API answers with.
 */
import type { IMember } from 'etcd3';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { EtcdMemberView } from '../../ports/etcd-recovery.ts';

/** etcd3's decimal id → hex; '0' (no leader) stays '0'. */
export function hexId(decimal: string): string {
  return BigInt(decimal).toString(16);
}

/** A hex id a person typed → etcd3's decimal; anything else is MOLT_BAD_INPUT. */
export function decimalId(hex: string): string {
  if (!/^[0-9a-f]{1,16}$/i.test(hex))
    throw new MoltError(ErrorCode.BadInput, `${JSON.stringify(hex)} is not an etcd member id`, {
      hint: 'ids are hex, as `molt node etcd members` prints them (e.g. 8e9e05c52164694d)',
    });
  return BigInt(`0x${hex}`).toString(10);
}

/**
 * `leader` is etcd3's decimal id of the leader ('0': none known); `self` names this machine's
 * member (an unstarted one has no name yet, only its peer URL).
 */
export function memberView(
  m: IMember,
  leader: string,
  self: { readonly name: string; readonly peerUrl: string },
): EtcdMemberView {
  return {
    id: hexId(m.ID),
    name: m.name,
    peerUrls: [...m.peerURLs],
    clientUrls: [...m.clientURLs],
    isLeader: leader !== '0' && m.ID === leader,
    isLearner: m.isLearner,
    self: m.name === self.name || m.peerURLs.includes(self.peerUrl),
  };
}

/** A started voting member (a learner, or a member added but never started, is not). */
export const isVoter = (m: IMember): boolean => !m.isLearner && m.name !== '';
