// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes plans and desired specs of the memory store (`operator-store.ts`): the same rules
 * as the etcd store's (`etcd-store/kube-upgrades.ts`), on maps the instances of one backend share.
 * Each write reads, checks and commits in one synchronous turn, so two racing creates of a
 * cluster's plan cannot both see "none running".
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { KubeUpgrade } from '../../../core/kubernetes/types.ts';
import {
  notFound,
  runningError,
  runningPlan,
  type KubeDesiredRecord,
  type KubeUpgradeStore,
} from '../../ports/kube-upgrade-store.ts';

/** What the instances of one memory backend share. */
export class MemoryKubeBackend {
  /** By `<cluster>/<id>`. */
  readonly plans = new Map<string, KubeUpgrade>();
  readonly desired = new Map<string, KubeDesiredRecord>();
}

const copy = <T>(v: T): T => structuredClone(v);
const key = (cluster: string, id: string): string => `${cluster}\u0000${id}`;

export function memoryKubeUpgrades(b: MemoryKubeBackend): KubeUpgradeStore {
  return {
    kubeUpgrades(cluster) {
      const all = [...b.plans.values()].filter(
        (p) => cluster === undefined || p.cluster === cluster,
      );
      all.sort((x, y) =>
        x.cluster === y.cluster ? (x.id < y.id ? -1 : 1) : x.cluster < y.cluster ? -1 : 1,
      );
      return Promise.resolve(copy(all));
    },
    createKubeUpgrade(plan) {
      const running = runningPlan(b.plans.values(), plan.cluster);
      if (running !== undefined) return Promise.reject(runningError(running));
      if (b.plans.has(key(plan.cluster, plan.id)))
        return Promise.reject(new MoltError(ErrorCode.BadInput, `plan ${plan.id} already exists`));
      b.plans.set(key(plan.cluster, plan.id), copy(plan));
      return Promise.resolve();
    },
    updateKubeUpgrade(cluster, id, change) {
      const current = b.plans.get(key(cluster, id));
      if (current === undefined) return Promise.reject(notFound(cluster, id));
      const next = change(copy(current));
      if (next.id !== id || next.cluster !== cluster)
        return Promise.reject(
          new MoltError(
            ErrorCode.BadInput,
            `an update of plan ${id} may not change its id or cluster`,
          ),
        );
      b.plans.set(key(cluster, id), copy(next));
      return Promise.resolve(copy(next));
    },
    kubeDesired: (cluster) => Promise.resolve(copy(b.desired.get(cluster))),
    putKubeDesired(record) {
      b.desired.set(record.cluster, copy(record));
      return Promise.resolve();
    },
  };
}
