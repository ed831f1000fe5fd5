// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes part of the operator's reconcile pass (docs/adr/0012 §1, §4), level-based: for
 * each cluster with a desired Kubernetes, make sure its moving plan has a runner, or — when none
 * moves and the desired spec asks for one (`core/kubernetes/desired.ts`) — propose, check and
 * record a new plan, then start its runner. Runners run beside the loop (a component apply takes
 * minutes; rollouts must not wait for it), one per cluster, each step read from the store: a new
 * leader's first pass starts the runner of a plan its predecessor left in the middle.
 *
 * A refused plan is said once per cluster, target and code (a `warning` in the history), not
 * every pass; it is tried again every pass, since the reason (etcd, an agent away) may pass.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorLine, isMoltError } from '../../core/errors.ts';
import { planNeeded, settledBy } from '../../core/kubernetes/desired.ts';
import { isActivePlan, type KubeUpgrade } from '../../core/kubernetes/types.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import { recordTransition } from '../transitions/record.ts';
import type { KubePlanDeps } from './deps.ts';
import { effectiveDesired } from './desired.ts';
import { clusterInventory } from './inventory.ts';
import { proposePlan } from './propose.ts';
import { drivePlan } from './runner.ts';
import { desiredOf } from './spec.ts';

/** How long a stopping operator waits for its runners. */
const stopGraceMs = 2_000;

export interface KubePlanDriver {
  /** One pass: new plans where the desired spec asks, a runner for every moving plan. */
  pass(): Promise<void>;
  /** Start the runner of `cluster`'s moving plan now (the API recorded one). */
  kick(cluster: string): void;
  /** Resolves when no runner is running (tests; a stopping operator). */
  idle(): Promise<void>;
  /** Stop the runners after the step each is in. */
  stop(): Promise<void>;
}

/** Record a new plan and its history event. */
export async function recordPlan(d: KubePlanDeps, plan: KubeUpgrade): Promise<void> {
  const what =
    plan.kind === 'finalize'
      ? `finalize ${plan.target.version} (drop the emulation)`
      : `${plan.kind} ${plan.from.version} → ${plan.target.version}`;
  const message = `${plan.cluster} plan ${plan.id}: ${what}, ${String(plan.steps.length)} steps, asked by ${plan.by}`;
  await recordTransition(d, {
    write: (store) => store.createKubeUpgrade(plan),
    record: {
      log: message,
      event: {
        kind: 'kube-plan',
        message,
        data: {
          cluster: plan.cluster,
          plan: plan.id,
          phase: plan.phase,
          kind: plan.kind,
          target: plan.target.version,
          from: plan.from.version,
          by: plan.by,
        },
      },
    },
  });
}

export function createKubePlanDriver(d: KubePlanDeps): KubePlanDriver {
  const runners = new Map<string, Promise<void>>();
  const warned = new Set<string>();
  const stopping = new AbortController();

  const ensure = (cluster: string, id: string): void => {
    if (runners.has(cluster) || stopping.signal.aborted) return;
    const run = drivePlan(d, cluster, id, stopping.signal)
      .then(() => undefined)
      .catch((e: unknown) => {
        d.log(
          `${cluster} plan ${id}: the runner stopped, the next pass starts it again: ${errorLine(e)}`,
        );
      })
      .finally(() => runners.delete(cluster));
    runners.set(cluster, run);
  };

  const refuse = async (
    cluster: string,
    spec: KubernetesClusterSpec,
    e: unknown,
  ): Promise<void> => {
    const key = `${cluster} ${JSON.stringify(spec)} ${isMoltError(e) ? e.code : 'error'}`;
    if (warned.has(key)) return;
    warned.add(key);
    const message = `${cluster}: Kubernetes ${spec.version} not planned: ${errorLine(e)}`;
    d.log(message);
    await d.store.appendHistory({
      at: d.now(),
      kind: 'warning',
      message,
      data: { cluster, version: spec.version, ...(isMoltError(e) && { code: e.code }) },
    });
  };

  const clusterPass = async (cluster: string): Promise<void> => {
    const plans = await d.store.kubeUpgrades(cluster);
    const latest = plans.at(-1);
    if (latest !== undefined && isActivePlan(latest.phase)) {
      ensure(cluster, latest.id);
      return;
    }
    const spec = await effectiveDesired(d, cluster);
    if (spec === undefined) return;
    // The common pass: the latest plan settles the desired spec, and no agent needs asking.
    if (settledBy(desiredOf(spec), latest)) return;
    try {
      const inv = await clusterInventory(d, cluster);
      const need = planNeeded(desiredOf(spec), inv.machines, latest);
      if (need.kind === 'none') return;
      const plan = await proposePlan(d, { cluster, kind: need.kind, spec, by: 'declared' });
      await recordPlan(d, plan);
      ensure(cluster, plan.id);
    } catch (e) {
      await refuse(cluster, spec, e);
    }
  };

  return {
    async pass() {
      if (!d.isLeader()) return;
      const clusters = new Set([
        ...d.declared().specs.keys(),
        ...(await d.store.kubeUpgrades()).map((p) => p.cluster),
      ]);
      for (const cluster of [...clusters].sort()) await clusterPass(cluster);
    },
    kick(cluster) {
      void d.store.kubeUpgrades(cluster).then(
        (plans) => {
          const latest = plans.at(-1);
          if (latest !== undefined && isActivePlan(latest.phase) && d.isLeader())
            ensure(cluster, latest.id);
        },
        (e: unknown) => {
          d.log(`${cluster}: could not read its plans: ${errorLine(e)}`);
        },
      );
    },
    async idle() {
      while (runners.size > 0) await Promise.all([...runners.values()]);
    },
    async stop() {
      stopping.abort();
      // A step can take minutes: wait a moment for runners between steps, not for an apply. The
      // interrupted step stays `started` in the store and the next leader runs it again.
      await Promise.race([Promise.all([...runners.values()]), sleep(stopGraceMs)]);
    },
  };
}
