// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes plans and desired specs of the etcd operator store (layout in `layout.ts`).
 *
 * "One moving plan per cluster" is one transaction: a create reads the cluster's plans and its
 * head key (`kube-upgrade-heads/<cluster>`, the newest plan's id), refuses when one still moves,
 * and commits the new plan together with the head only while the head is at the revision read.
 * Two creates racing both rewrite the head, so one loses the compare, re-reads, and then sees the
 * other's plan running. Updates are compare-and-swap on the plan's own key, like rollouts.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { KubeUpgrade } from '../../../core/kubernetes/types.ts';
import {
  notFound,
  runningError,
  runningPlan,
  type KubeDesiredRecord,
} from '../../ports/kube-upgrade-store.ts';
import { commit, Conflict, get, prefixEnd, range, retrying, type StoreCtx } from './cas.ts';
import { decode, encode } from './codec.ts';

export async function kubeUpgrades(ctx: StoreCtx, cluster?: string): Promise<KubeUpgrade[]> {
  const prefix = cluster === undefined ? ctx.keys.kubeUpgrades : ctx.keys.kubeUpgrade(cluster);
  const kvs = await range(ctx, { from: prefix, to: prefixEnd(prefix).toString() });
  return kvs.map((kv) => decode('kubeUpgrade', kv.key, kv.value));
}

export function createKubeUpgrade(ctx: StoreCtx, plan: KubeUpgrade): Promise<void> {
  const key = ctx.keys.kubeUpgrade(plan.cluster, plan.id);
  const head = ctx.keys.kubeUpgradeHead(plan.cluster);
  const what = `creating Kubernetes plan ${plan.id} of ${plan.cluster}`;
  return retrying(ctx, what, async () => {
    const guard = await get(ctx, head);
    const plans = await kubeUpgrades(ctx, plan.cluster);
    const running = runningPlan(plans, plan.cluster);
    if (running !== undefined) throw runningError(running);
    if (plans.some((p) => p.id === plan.id))
      throw new MoltError(ErrorCode.BadInput, `plan ${plan.id} already exists`);
    const outcome = await commit(ctx, {
      what,
      guard: head,
      modRevision: guard?.modRevision ?? '0',
      current: guard?.value,
      puts: [
        { key, value: encode(plan) },
        { key: head, value: JSON.stringify(plan.id) },
      ],
    });
    return outcome === 'written' ? undefined : Conflict;
  });
}

export function updateKubeUpgrade(
  ctx: StoreCtx,
  cluster: string,
  id: string,
  change: (current: KubeUpgrade) => KubeUpgrade,
): Promise<KubeUpgrade> {
  const key = ctx.keys.kubeUpgrade(cluster, id);
  const what = `updating Kubernetes plan ${id} of ${cluster}`;
  return retrying(ctx, what, async () => {
    const kv = await get(ctx, key);
    if (kv === undefined) throw notFound(cluster, id);
    const next = change(decode('kubeUpgrade', kv.key, kv.value));
    if (next.id !== id || next.cluster !== cluster)
      throw new MoltError(
        ErrorCode.BadInput,
        `an update of plan ${id} may not change its id or cluster`,
      );
    const outcome = await commit(ctx, {
      what,
      guard: key,
      modRevision: kv.modRevision,
      current: kv.value,
      puts: [{ key, value: encode(next) }],
    });
    return outcome === 'written' ? next : Conflict;
  });
}

export async function kubeDesired(
  ctx: StoreCtx,
  cluster: string,
): Promise<KubeDesiredRecord | undefined> {
  const kv = await get(ctx, ctx.keys.kubeDesired(cluster));
  return kv === undefined ? undefined : decode('kubeDesired', kv.key, kv.value);
}
