// SPDX-License-Identifier: Apache-2.0
/**
 * In-memory etcd members sharing one {@link FakeEtcdCluster}; each member's process is a
 * {@link FakeServices} (stopped = down). Same quorum rules as the real adapter (etcd-quorum.ts);
 * passes `testkit/etcd-member-conformance.ts`.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { EtcdMember, MemberHealth } from './etcd-member.ts';
import { judgeQuorum } from './etcd-quorum.ts';
import { createFakeServices, type FakeServices } from './services.fake.ts';

interface FakeMemberEntry {
  readonly id: string;
  readonly name: string;
  learner: boolean;
}

/** The shared membership of fake etcd members. */
export interface FakeEtcdCluster {
  readonly entries: Map<string, FakeMemberEntry>;
  /** The local etcd process of each member, by name. */
  readonly services: ReadonlyMap<string, FakeServices>;
}

let ids = 0;

export function createFakeEtcdCluster(names: readonly string[]): FakeEtcdCluster {
  const entries = new Map(names.map((name) => [name, { id: String(++ids), name, learner: false }]));
  return { entries, services: new Map(names.map((n) => [n, createFakeServices(['etcd'])])) };
}

export function createFakeEtcdMember(cluster: FakeEtcdCluster, name: string): EtcdMember {
  const service = cluster.services.get(name);
  if (service === undefined) throw new Error(`no fake etcd member ${name}`);
  const up = async (n: string): Promise<boolean> =>
    ((await cluster.services.get(n)?.running()) ?? []).length > 0;
  const health = async (e: FakeMemberEntry): Promise<MemberHealth> => {
    const alive = await up(e.name);
    const healthy = alive && !e.learner;
    return {
      name: e.name,
      id: e.id,
      learner: e.learner,
      healthy,
      ...(healthy ? {} : { message: alive ? 'learner' : 'unreachable' }),
    };
  };
  return {
    async checkQuorum(o) {
      const members = await Promise.all([...cluster.entries.values()].map(health));
      return judgeQuorum({ self: name, members, ...o });
    },
    leave() {
      cluster.entries.delete(name);
      return Promise.resolve();
    },
    async rejoin(o) {
      if (!cluster.entries.has(name) && !o.asNewMember)
        throw new MoltError(
          ErrorCode.EtcdUnhealthy,
          `${name} is no longer an etcd member; it must rejoin as a new member`,
        );
      if (!cluster.entries.has(name))
        cluster.entries.set(name, { id: String(++ids), name, learner: true });
      await service.startAll();
      const entry = cluster.entries.get(name);
      if (entry !== undefined) entry.learner = false; // caught up at once, promoted
    },
    async healthy() {
      const entry = cluster.entries.get(name);
      if (entry === undefined)
        return {
          name,
          id: '',
          healthy: false,
          learner: false,
          message: 'not a member of the cluster',
        };
      return health(entry);
    },
  };
}
