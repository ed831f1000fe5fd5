// SPDX-License-Identifier: Apache-2.0
/**
 * How a recorded plan moves (docs/adr/0012 §4): pure functions from a record to the next record,
 * which the operator's runner stores before and after each step.
 *
 * | phase | step outcome | next phase |
 * |---|---|---|
 * | Running | every step done | Succeeded |
 * | Running | a step failed (the agent's error, or a health gate) | RollingBack, with the undo steps |
 * | Running | a person asks for the rollback | RollingBack |
 * | RollingBack | every undo step done | RolledBack |
 * | RollingBack | an undo step failed | Failed (a person looks; the record says where) |
 *
 * The rollback undoes, in reverse order, every `apply` that started — done, failed or interrupted
 * (an unknown outcome): applying the spec a component ran before is idempotent, so undoing one
 * that never changed costs nothing. Before the first undo on a machine that handed its etcd
 * leadership over, leadership is handed over again. Pre-pulls are not undone (a staged bundle
 * changes nothing that runs).
 */
import { numbered } from './plan.ts';
import type { KubeStep, KubeUpgrade } from './types.ts';

/** Which list of a record a step is in. */
export type StepList = 'steps' | 'rollback';

/** The next step to run, or what the plan needs when none is left. */
export type NextStep =
  | { readonly kind: 'run'; readonly list: StepList; readonly step: KubeStep }
  | { readonly kind: 'finish' }
  | { readonly kind: 'none' };

/** The undo steps of `u`'s started applies, in the order they run. */
export function rollbackSteps(u: Pick<KubeUpgrade, 'steps'>): KubeStep[] {
  const started = u.steps.filter((s) => s.state !== 'pending');
  const forfeited = new Set(
    started.filter((s) => s.action === 'forfeit-leadership').map((s) => s.machine),
  );
  const undo = started.filter((s) => s.action === 'apply' && s.previous !== undefined).reverse();
  const drafts: Omit<KubeStep, 'id' | 'state'>[] = [];
  for (const s of undo) {
    if (forfeited.delete(s.machine))
      drafts.push({ machine: s.machine, action: 'forfeit-leadership' });
    drafts.push({
      machine: s.machine,
      action: 'apply',
      ...(s.component !== undefined && { component: s.component }),
      ...(s.previous !== undefined && { spec: s.previous }),
      ...(s.spec !== undefined && { previous: s.spec }),
    });
  }
  return numbered(drafts, 'undo-');
}

/** The step to run next. */
export function nextStep(u: KubeUpgrade): NextStep {
  if (u.phase !== 'Running' && u.phase !== 'RollingBack') return { kind: 'none' };
  const list: StepList = u.phase === 'Running' ? 'steps' : 'rollback';
  const step = u[list].find((s) => s.state !== 'done');
  return step === undefined ? { kind: 'finish' } : { kind: 'run', list, step };
}

function setStep(
  u: KubeUpgrade,
  list: StepList,
  id: string,
  change: (s: KubeStep) => KubeStep,
): KubeUpgrade {
  return { ...u, [list]: u[list].map((s) => (s.id === id ? change(s) : s)) };
}

/** Record that step `id` starts (again, after an interrupted run: applies are idempotent). */
export function stepStarted(u: KubeUpgrade, list: StepList, id: string, now: number): KubeUpgrade {
  return setStep(u, list, id, (s) => {
    const rest: KubeStep = { ...s, state: 'started', startedAt: now };
    delete (rest as { error?: string }).error;
    delete (rest as { finishedAt?: number }).finishedAt;
    return rest;
  });
}

/** Record that step `id` is done. */
export function stepDone(u: KubeUpgrade, list: StepList, id: string, now: number): KubeUpgrade {
  return setStep(u, list, id, (s) => ({ ...s, state: 'done', finishedAt: now }));
}

/**
 * Record that step `id` failed: a forward step starts the rollback, an undo step fails the plan.
 * A plan already rolling back (a person asked while the step ran) keeps its undo steps.
 */
export function stepFailed(
  u: KubeUpgrade,
  o: { readonly list: StepList; readonly id: string; readonly error: string; readonly now: number },
): KubeUpgrade {
  const failed = setStep(u, o.list, o.id, (s) => ({
    ...s,
    state: 'failed',
    finishedAt: o.now,
    error: o.error,
  }));
  const reason = `${o.id} failed: ${o.error}`;
  if (o.list === 'rollback')
    return {
      ...failed,
      phase: 'Failed',
      endedAt: o.now,
      reason: `${u.reason ?? ''}; then ${reason}`.replace(/^; then /, ''),
    };
  if (failed.phase !== 'Running') return failed;
  return { ...failed, phase: 'RollingBack', rollback: rollbackSteps(failed), reason };
}

/** A person's rollback of a running (or finished) plan: undo what started, in reverse. */
export function rollBackPlan(u: KubeUpgrade, reason: string): KubeUpgrade {
  if (u.phase !== 'Running') return u;
  return { ...u, phase: 'RollingBack', rollback: rollbackSteps(u), reason };
}

/** Record that no step is left: Succeeded, or RolledBack. */
export function finished(u: KubeUpgrade, now: number): KubeUpgrade {
  if (u.phase === 'Running') return { ...u, phase: 'Succeeded', endedAt: now };
  if (u.phase === 'RollingBack') return { ...u, phase: 'RolledBack', endedAt: now };
  return u;
}
