// SPDX-License-Identifier: Apache-2.0
/**
 * Kubernetes plans of the Kubernetes store (docs/adr/0016): one record per cluster holding all its
 * plans, so "one moving plan per cluster" is one compare-and-swap — a create reads the record,
 * refuses while a plan moves, and replaces it at the resourceVersion read; of two racing creates
 * one conflicts, re-reads and then sees the other's plan running. Bounded: past
 * {@link KEPT_PLANS} plans, the oldest ended ones are dropped (a cluster upgrades a few times a
 * year; a plan is a few KiB). The desired spec is a record of its own (last writer wins).
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { isActivePlan, type KubeUpgrade } from '../../../core/kubernetes/types.ts';
import {
  notFound,
  runningError,
  runningPlan,
  type KubeDesiredRecord,
  type KubeUpgradeStore,
} from '../../ports/kube-upgrade-store.ts';
import { decodeData, decodeList } from './codec.ts';
import { Conflict, type Read, type Records } from './records.ts';

export const KEPT_PLANS = 32;

const byId = (a: KubeUpgrade, b: KubeUpgrade): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function plansOf(r: Records, read: Read): KubeUpgrade[] {
  const where = { namespace: r.namespace, kind: read.kind, key: read.key };
  return decodeList('kubeUpgrade', where, read.data, 'plans').sort(byId);
}

/**
 * The newest {@link KEPT_PLANS}, dropping ended plans oldest first. A moving plan stays, and so
 * does the newest that succeeded: its arguments are what the components run with now.
 */
export function bounded(plans: readonly KubeUpgrade[]): KubeUpgrade[] {
  const out = [...plans].sort(byId);
  const current = out.findLast((p) => p.phase === 'Succeeded');
  for (let i = 0; out.length > KEPT_PLANS && i < out.length;)
    if (isActivePlan(out[i]?.phase ?? 'Running') || out[i] === current) i++;
    else out.splice(i, 1);
  return out;
}

export function kubeUpgradeStore(r: Records): KubeUpgradeStore {
  return {
    async kubeUpgrades(cluster) {
      if (cluster !== undefined) {
        const read = await r.get('kubeplans', cluster);
        return read === undefined ? [] : plansOf(r, read);
      }
      const reads = (await r.list(['kubeplans'])).sort((a, b) =>
        a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
      );
      return reads.flatMap((read) => plansOf(r, read));
    },
    createKubeUpgrade(plan) {
      return r.retrying(`creating Kubernetes plan ${plan.id} of ${plan.cluster}`, async () => {
        const read = await r.get('kubeplans', plan.cluster);
        const plans = read === undefined ? [] : plansOf(r, read);
        const running = runningPlan(plans, plan.cluster);
        if (running !== undefined) throw runningError(running);
        if (plans.some((p) => p.id === plan.id))
          throw new MoltError(ErrorCode.BadInput, `plan ${plan.id} already exists`);
        const data = { plans: bounded([...plans, plan]) };
        const outcome =
          read === undefined
            ? await r.create('kubeplans', plan.cluster, data)
            : await r.replace('kubeplans', plan.cluster, data, read.rv);
        return outcome === Conflict ? Conflict : undefined;
      });
    },
    updateKubeUpgrade(cluster, id, change) {
      return r.retrying(`updating Kubernetes plan ${id} of ${cluster}`, async () => {
        const read = await r.get('kubeplans', cluster);
        const plans = read === undefined ? [] : plansOf(r, read);
        const current = plans.find((p) => p.id === id);
        if (read === undefined || current === undefined) throw notFound(cluster, id);
        const next = change(current);
        if (next.id !== id || next.cluster !== cluster)
          throw new MoltError(
            ErrorCode.BadInput,
            `an update of plan ${id} may not change its id or cluster`,
          );
        const data = { plans: plans.map((p) => (p.id === id ? next : p)) };
        return (await r.replace('kubeplans', cluster, data, read.rv)) === Conflict
          ? Conflict
          : next;
      });
    },
    async kubeDesired(cluster) {
      const read = await r.get('kubedesired', cluster);
      if (read === undefined) return undefined;
      const where = { namespace: r.namespace, kind: read.kind, key: read.key };
      return decodeData('kubeDesired', where, read.data);
    },
    putKubeDesired: (record: KubeDesiredRecord) => r.put('kubedesired', record.cluster, record),
  };
}
