// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/clusters/:cluster/kubernetes` and `POST …/{upgrade,finalize,rollback}` (docs/adr/0012).
 * A request is checked like a declared change — the same checks, the same plan — and, unless it is
 * a dry run, becomes the cluster's desired Kubernetes (recorded with who asked) and a recorded plan
 * the leader's runner starts at once. Refusals keep their codes (`MOLT_KUBE_*`) and carry the
 * checks in their details. POSTs need the operator or admin role (`app.ts`).
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, errorLine, MoltError } from '../../core/errors.ts';
import { rollBackPlan } from '../../core/kubernetes/progress.ts';
import { isActivePlan, type KubePlanKind, type KubeUpgrade } from '../../core/kubernetes/types.ts';
import { iso } from '../../core/time.ts';
import { minorOf } from '../../core/kubernetes/version.ts';
import { parseInput } from '../../platform/https/input.ts';
import { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import {
  KubeFinalizeRequestBody,
  KubeRollbackRequestBody,
  KubeUpgradeRequestBody,
  KubernetesOperatorRoutes as K,
  type KubeClusterStatusView,
  type KubeMachineStatusView,
  type KubePlanAnswer,
} from '../../protocol/operator-kubernetes.ts';
import type { KubernetesApi } from '../kubernetes/deps.ts';
import { currentDesired, effectiveDesired, requestDesired } from '../kubernetes/desired.ts';
import { recordPlan } from '../kubernetes/driver.ts';
import { controlPlaneRecords } from '../kubernetes/inventory.ts';
import { proposePlan } from '../kubernetes/propose.ts';
import { recordTransition } from '../transitions/record.ts';
import type { RouteContext } from './context.ts';
import { planView } from './kube-views.ts';

const clusterOf = (request: { params: unknown }): string => {
  const c = (request.params as { cluster?: unknown }).cluster;
  if (typeof c !== 'string' || c === '' || c.length > 200)
    throw new MoltError(ErrorCode.BadInput, 'invalid cluster name');
  return c;
};

async function machinesOf(k: KubernetesApi, cluster: string): Promise<KubeMachineStatusView[]> {
  const records = await controlPlaneRecords(k.plans, cluster);
  return Promise.all(
    records.map(async (m) => {
      try {
        const view = await k.plans.agents.controlPlane(m);
        return {
          machine: m.id,
          components: view.components.map((c) => ({
            name: c.name,
            running: c.running,
            healthy: c.healthy,
            ...(c.version !== undefined && { version: c.version }),
            ...(c.emulatedVersion !== undefined && { emulatedVersion: c.emulatedVersion }),
          })),
        };
      } catch (e) {
        return { machine: m.id, components: [], error: errorLine(e) };
      }
    }),
  );
}

async function status(k: KubernetesApi, cluster: string): Promise<KubeClusterStatusView> {
  const plans = await k.plans.store.kubeUpgrades(cluster);
  const desired = await currentDesired(k.plans, cluster);
  const latest = plans.at(-1);
  return {
    cluster,
    ...(desired !== undefined && {
      desired: {
        version: desired.spec.version,
        finalize: desired.spec.finalize,
        by: desired.by,
        ...(desired.at !== undefined && { at: iso(desired.at) }),
      },
    }),
    machines: await machinesOf(k, cluster),
    ...(latest !== undefined && { plan: planView(latest) }),
    plans: plans.map((p) => ({
      id: p.id,
      kind: p.kind,
      phase: p.phase,
      target: p.target.version,
      createdAt: iso(p.createdAt),
    })),
  };
}

async function refuseWhileMoving(
  k: KubernetesApi,
  cluster: string,
): Promise<KubeUpgrade | undefined> {
  const latest = (await k.plans.store.kubeUpgrades(cluster)).at(-1);
  if (latest !== undefined && isActivePlan(latest.phase))
    throw new MoltError(
      ErrorCode.KubeUpgradeRunning,
      `cluster ${cluster} already has a Kubernetes plan in progress: ${latest.id} (${latest.phase})`,
      {
        hint: `follow it with \`molt cluster kubernetes status --cluster ${cluster}\`, or roll it back`,
      },
    );
  return latest;
}

interface Ask {
  readonly cluster: string;
  readonly kind: KubePlanKind;
  readonly spec: KubernetesClusterSpec;
  readonly by: string;
  readonly dryRun: boolean;
}

/** Propose, and unless a dry run record the desired spec and the plan, then start its runner. */
async function ask(k: KubernetesApi, a: Ask): Promise<KubePlanAnswer> {
  await refuseWhileMoving(k, a.cluster);
  const plan = await proposePlan(k.plans, {
    cluster: a.cluster,
    kind: a.kind,
    spec: a.spec,
    by: a.by,
  });
  if (a.dryRun) return { plan: planView(plan), dryRun: true, changed: false };
  await requestDesired(k.plans, { cluster: a.cluster, spec: a.spec, by: a.by });
  if (plan.steps.length === 0)
    return { plan: planView({ ...plan, phase: 'Succeeded' }), dryRun: false, changed: false };
  await recordPlan(k.plans, plan);
  k.kick(a.cluster);
  return { plan: planView(plan), dryRun: false, changed: true };
}

const current = async (
  k: KubernetesApi,
  cluster: string,
  version: string,
): Promise<KubernetesClusterSpec> =>
  (await effectiveDesired(k.plans, cluster)) ?? KubernetesClusterSpec.parse({ version });

/** A person's rollback of the cluster's latest plan. */
async function rollback(
  k: KubernetesApi,
  o: { cluster: string; by: string; reason?: string | undefined; dryRun: boolean },
): Promise<KubePlanAnswer> {
  const latest = (await k.plans.store.kubeUpgrades(o.cluster)).at(-1);
  if (latest === undefined)
    throw new MoltError(
      ErrorCode.KubeUpgradeNotFound,
      `cluster ${o.cluster} has no Kubernetes plan to roll back`,
    );
  const why = `rolled back by ${o.by}${o.reason === undefined ? '' : `: ${o.reason}`}`;
  if (latest.phase === 'RollingBack')
    return { plan: planView(latest), dryRun: o.dryRun, changed: false };
  if (latest.phase === 'Running') {
    if (o.dryRun)
      return { plan: planView(rollBackPlan(latest, why)), dryRun: true, changed: false };
    let after = latest;
    await recordTransition(k.plans, {
      write: async (store) =>
        (after = await store.updateKubeUpgrade(o.cluster, latest.id, (p) => rollBackPlan(p, why))),
      record: (u) =>
        u.phase === 'RollingBack'
          ? {
              log: `${o.cluster} plan ${latest.id}: RollingBack, ${why}`,
              event: {
                kind: 'kube-plan',
                message: `${o.cluster} plan ${latest.id}: RollingBack to ${latest.from.version}, ${why}`,
                data: { cluster: o.cluster, plan: latest.id, phase: 'RollingBack', by: o.by },
              },
            }
          : undefined,
    });
    k.kick(o.cluster);
    return { plan: planView(after), dryRun: false, changed: after.phase === 'RollingBack' };
  }
  if (latest.phase !== 'Succeeded' || latest.kind === 'finalize')
    throw new MoltError(
      ErrorCode.RolloutState,
      `plan ${latest.id} is ${latest.phase === 'Succeeded' ? 'a finalize, the point of no return' : latest.phase}: there is nothing to roll back`,
      { hint: 'after a finalize only a patch of the same minor, or an upgrade, is possible' },
    );
  const spec = {
    ...(await current(k, o.cluster, latest.from.version)),
    version: latest.from.version,
    finalize: false,
  };
  return ask(k, { cluster: o.cluster, kind: 'rollback', spec, by: o.by, dryRun: o.dryRun });
}

/** The Kubernetes routes; none are served when the operator has no plans to run (`kubernetes` unset). */
export function kubernetesRoutes(
  app: FastifyInstance,
  c: RouteContext,
  k: KubernetesApi | undefined,
): void {
  const api = (): KubernetesApi => {
    if (k === undefined)
      throw new MoltError(ErrorCode.BadInput, 'this operator runs no Kubernetes plans');
    return k;
  };
  app.get(K.status, async (request) => status(api(), clusterOf(request)));
  app.post(K.upgrade, async (request) => {
    const b = parseInput(KubeUpgradeRequestBody, request.body ?? {}, 'upgrade request');
    const cluster = clusterOf(request);
    const was = await current(api(), cluster, b.version);
    // A new minor is not finalized until asked again: its emulation window opens anew.
    const finalize = was.finalize && minorOf(was.version) === minorOf(b.version);
    const spec = { ...was, version: b.version, finalize };
    return ask(api(), {
      cluster,
      kind: 'upgrade',
      spec,
      by: c.who(request).name,
      dryRun: b.dryRun,
    });
  });
  app.post(K.finalize, async (request) => {
    const b = parseInput(KubeFinalizeRequestBody, request.body ?? {}, 'finalize request');
    const cluster = clusterOf(request);
    const known = await effectiveDesired(api().plans, cluster);
    const version = known?.version ?? (await refuseWhileMoving(api(), cluster))?.target.version;
    if (version === undefined)
      throw new MoltError(
        ErrorCode.KubeUpgradeNotFound,
        `cluster ${cluster} has no desired Kubernetes to finalize`,
      );
    const spec = { ...(known ?? KubernetesClusterSpec.parse({ version })), finalize: true };
    return ask(api(), {
      cluster,
      kind: 'finalize',
      spec,
      by: c.who(request).name,
      dryRun: b.dryRun,
    });
  });
  app.post(K.rollback, async (request) => {
    const b = parseInput(KubeRollbackRequestBody, request.body ?? {}, 'rollback request');
    return rollback(api(), {
      cluster: clusterOf(request),
      by: c.who(request).name,
      reason: b.reason,
      dryRun: b.dryRun,
    });
  });
}
