// SPDX-License-Identifier: Apache-2.0
/** Tables and lines of `molt node service|etcd` and `molt cluster recover` (docs/adr/0012 §6). */
import type { EtcdMemberView, ServiceView } from '../../../protocol/agent-kubernetes.ts';
import type { PrintColumn } from '../../../protocol/index.ts';

export const serviceColumns: readonly PrintColumn<ServiceView>[] = [
  { header: 'SERVICE', value: (s) => s.name },
  { header: 'RUNNING', value: (s) => (s.running ? 'yes' : 'no') },
  { header: 'PID', value: (s) => (s.pid === undefined ? '-' : String(s.pid)) },
  { header: 'SINCE', value: (s) => s.since ?? '-' },
];

export const memberColumns: readonly PrintColumn<EtcdMemberView>[] = [
  { header: 'ID', value: (m) => m.id },
  { header: 'NAME', value: (m) => m.name || '(not started)' },
  {
    header: 'ROLE',
    value: (m) => (m.isLeader ? 'leader' : m.isLearner ? 'learner' : 'follower'),
  },
  { header: 'PEER', value: (m) => m.peerUrls.join(',') },
  { header: 'CLIENT', value: (m) => m.clientUrls.join(',') || '-' },
];

/** `kube-apiserver: running (PID 123 since …)` or `etcd: stopped`. */
export function serviceLine(s: ServiceView): string {
  if (!s.running) return `${s.name}: stopped`;
  const pid = s.pid === undefined ? '' : `PID ${String(s.pid)}`;
  const since = s.since === undefined ? '' : `since ${s.since}`;
  const detail = [pid, since].filter((x) => x !== '').join(' ');
  return `${s.name}: running${detail === '' ? '' : ` (${detail})`}`;
}

/** `3 members: cp-1 (leader), cp-2, cp-3 (learner)`. */
export function membersLine(members: readonly EtcdMemberView[]): string {
  const names = members.map(
    (m) => `${m.name || m.id}${m.isLeader ? ' (leader)' : ''}${m.isLearner ? ' (learner)' : ''}`,
  );
  return `${String(members.length)} member${members.length === 1 ? '' : 's'}: ${names.join(', ')}`;
}
