// SPDX-License-Identifier: Apache-2.0
/**
 * Runs a recorded Kubernetes plan one step at a time (docs/adr/0012 §4, STYLE §5: persist, then
 * act): each step is recorded `started` before the agent is asked and `done` or `failed` after, so
 * a new leader reads from the store exactly where the plan is and runs the next step — or the
 * interrupted one again: pre-pulls, forfeits and applies are idempotent (an apply of the spec a
 * component already runs restarts nothing). An `apply` is done only when the agent answered that
 * the component is healthy *and* the cluster-side gate agrees (`/readyz`, the leader Lease
 * renewed). A failed step — the agent's error or a gate — starts the rollback by itself; a failed
 * undo step fails the plan for a person. An agent that does not answer is asked again a few times
 * before the step counts as failed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, errorLine, isMoltError, MoltError } from '../../core/errors.ts';
import {
  finished,
  nextStep,
  stepDone,
  stepFailed,
  stepStarted,
  type StepList,
} from '../../core/kubernetes/progress.ts';
import type { KubeStep, KubeUpgrade } from '../../core/kubernetes/types.ts';
import type { MachineRecord } from '../ports/store.ts';
import { recordTransition } from '../transitions/record.ts';
import type { KubePlanDeps } from './deps.ts';

/**
 * Attempts of a step whose agent does not answer, 2 s apart, doubling up to 30 s: about 3 minutes
 * in all, since an agent on a busy machine (its API server restarting beside it) may not answer for
 * a minute, and a plan that rolls back for that undoes work for nothing.
 */
const unreachableAttempts = 10;
const unreachableMaxWaitMs = 30_000;

async function reachable<T>(d: KubePlanDeps, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (attempt >= unreachableAttempts || !isMoltError(e, ErrorCode.AgentUnreachable)) throw e;
    }
    const wait = Math.min(2_000 * 2 ** (attempt - 1), unreachableMaxWaitMs);
    await (d.sleep ?? ((ms: number) => sleep(ms)))(wait);
  }
}

/** Carry out `step`; throws why it failed. */
async function execute(
  d: KubePlanDeps,
  plan: KubeUpgrade,
  step: KubeStep,
  on: { readonly machine: MachineRecord; readonly since: number },
): Promise<void> {
  const { machine, since } = on;
  if (step.action === 'prepull') {
    const bundle = step.bundle ?? plan.target.bundle;
    // The plan was checked when it was made, perhaps by an operator without the release key.
    await d.bundles.verify(bundle);
    await reachable(d, () => d.agents.prepull(machine, bundle));
    return;
  }
  if (step.action === 'forfeit-leadership') {
    await reachable(d, () => d.agents.forfeitLeadership(machine));
    return;
  }
  const { component, spec } = step;
  if (component === undefined || spec === undefined)
    throw new MoltError(ErrorCode.StoreCorrupt, `step ${step.id} applies nothing`);
  await reachable(d, () => d.agents.apply(machine, component, spec));
  const gate = await d.health.afterApply({ cluster: plan.cluster, component, since });
  if (!gate.ok)
    throw new MoltError(
      ErrorCode.KubeComponentUnhealthy,
      `${component} on ${machine.id}: ${gate.message}`,
    );
}

function stepEvent(
  plan: KubeUpgrade,
  step: KubeStep,
  what: string,
  data: Record<string, unknown> = {},
) {
  return {
    kind: 'kube-step' as const,
    machine: step.machine,
    message: `${plan.cluster} plan ${plan.id}: ${step.id} ${what}`,
    data: {
      cluster: plan.cluster,
      plan: plan.id,
      step: step.id,
      action: step.action,
      ...(step.component !== undefined && { component: step.component }),
      ...data,
    },
  };
}

function planEvent(plan: KubeUpgrade, message: string) {
  return {
    kind: 'kube-plan' as const,
    message: `${plan.cluster} plan ${plan.id}: ${message}`,
    data: {
      cluster: plan.cluster,
      plan: plan.id,
      phase: plan.phase,
      target: plan.target.version,
      ...(plan.reason !== undefined && { reason: plan.reason }),
    },
  };
}

async function update(
  d: KubePlanDeps,
  plan: KubeUpgrade,
  change: (p: KubeUpgrade) => KubeUpgrade,
): Promise<KubeUpgrade> {
  return d.store.updateKubeUpgrade(plan.cluster, plan.id, change);
}

/** Record the end of a plan whose steps are all done. */
async function finish(d: KubePlanDeps, plan: KubeUpgrade): Promise<KubeUpgrade> {
  let ended = plan;
  await recordTransition(d, {
    write: async () => (ended = await update(d, plan, (p) => finished(p, d.now()))),
    record: (u) =>
      u.phase === plan.phase
        ? undefined
        : {
            log: planEvent(u, u.phase).message,
            event: planEvent(
              u,
              u.phase === 'Succeeded'
                ? `Succeeded: ${plan.target.version} on every control-plane machine`
                : `RolledBack to ${plan.from.version}`,
            ),
          },
  });
  return ended;
}

/** Run the one next step of `plan` (or finish it); the plan as recorded after. */
export async function runNextStep(d: KubePlanDeps, plan: KubeUpgrade): Promise<KubeUpgrade> {
  const next = nextStep(plan);
  if (next.kind === 'none') return plan;
  if (next.kind === 'finish') return finish(d, plan);
  const { list, step } = next;
  const since = d.now();
  let started = plan;
  // Only if it is still the next step when written: a person's rollback may have come in between.
  const isNext = (p: KubeUpgrade): boolean => {
    const n = nextStep(p);
    return n.kind === 'run' && n.list === list && n.step.id === step.id;
  };
  const again = step.state === 'started' ? 'started again (resumed)' : 'started';
  const wrote = await recordTransition(d, {
    write: async () =>
      (started = await update(d, plan, (p) =>
        isNext(p) ? stepStarted(p, list, step.id, since) : p,
      )),
    record: (u) =>
      u[list].find((s) => s.id === step.id)?.startedAt === since
        ? { event: stepEvent(plan, step, again) }
        : undefined,
  });
  if (!wrote) return started;
  const machine = (await d.store.read()).machines.find((m) => m.id === step.machine);
  try {
    if (machine === undefined)
      throw new MoltError(ErrorCode.UnknownMachine, `machine ${step.machine} is no longer managed`);
    await execute(d, started, step, { machine, since });
  } catch (e) {
    return fail(d, started, { list, step, error: errorLine(e) });
  }
  let done = started;
  await recordTransition(d, {
    write: async () =>
      (done = await update(d, started, (p) => stepDone(p, list, step.id, d.now()))),
    record: { event: stepEvent(plan, step, 'done') },
  });
  return done;
}

async function fail(
  d: KubePlanDeps,
  plan: KubeUpgrade,
  o: { list: StepList; step: KubeStep; error: string },
): Promise<KubeUpgrade> {
  let failed = plan;
  await recordTransition(d, {
    write: async () =>
      (failed = await update(d, plan, (p) =>
        stepFailed(p, { list: o.list, id: o.step.id, error: o.error, now: d.now() }),
      )),
    record: {
      log: `${plan.cluster} plan ${plan.id}: ${o.step.id} failed: ${o.error}`,
      event: stepEvent(plan, o.step, `failed: ${o.error}`, { error: o.error }),
    },
  });
  if (failed.phase !== plan.phase) {
    const message =
      failed.phase === 'RollingBack'
        ? `RollingBack to ${plan.from.version}: ${o.error}`
        : `Failed: ${failed.reason ?? o.error} — a person must look`;
    await d.store.appendHistory({ at: d.now(), ...planEvent(failed, message) });
    d.log(`${plan.cluster} plan ${plan.id}: ${message}`);
  }
  return failed;
}

/**
 * Run `cluster`'s plan `id` step by step until it ends, this operator stops leading, or `signal`
 * aborts (after the step in progress). Each step starts from the stored record.
 */
export async function drivePlan(
  d: KubePlanDeps,
  cluster: string,
  id: string,
  signal?: AbortSignal,
): Promise<KubeUpgrade | undefined> {
  for (;;) {
    const plan = (await d.store.kubeUpgrades(cluster)).find((p) => p.id === id);
    if (plan === undefined || nextStep(plan).kind === 'none') return plan;
    if (!d.isLeader() || signal?.aborted === true) return plan;
    await runNextStep(d, plan);
  }
}
