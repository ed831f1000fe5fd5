// SPDX-License-Identifier: Apache-2.0
/**
 * Failures: `StepFailed` and a passed health deadline (`Tick`). Before the reboot a failure
 * aborts and undoes; after the target booted it rolls back (mark bad, reboot into the previous
 * slot). Indeterminate errors are failures too: every undo is safe on a step that never happened.
 */
import { ErrorCode } from '../errors.ts';
import type { Command } from './commands.ts';
import type { StepError, UpgradeEvent } from './events.ts';
import { discardPull, finish } from './finish.ts';
import { illegal, type IllegalTransition } from './illegal.ts';
import type { Phase } from './phase.ts';
import { enter, phaseCommands, type ActiveState } from './phase-commands.ts';
import { PreRebootPhases } from './plan.ts';
import type { Transition } from './state.ts';
import { holdsLease } from './undo.ts';

type StepFailed = Extract<UpgradeEvent, { type: 'StepFailed' }>;
type Failure = { readonly code: string; readonly message: string };

const failed = (failure: Failure): { result: 'Failed'; code: string; reason: string } => ({
  result: 'Failed',
  code: failure.code,
  reason: failure.message,
});

/** The commands of `list` after the first one of type `command` (what a failure left undone). */
function after(list: readonly Command[], command: Command['type']): readonly Command[] {
  const index = list.findIndex((c) => c.type === command);
  return index < 0 ? list : list.slice(index + 1);
}

/** Undo what was done, newest first; straight to `Idle` when there is nothing to undo. */
export function abort(state: ActiveState, failure: Failure, now: number): Transition {
  const next: ActiveState = { ...state, op: { ...state.op, failure } };
  if (next.undo.length === 0) return finish(next, now, failed(failure), discardPull(next));
  return enter(next, 'Aborting');
}

/** A failure after the target booted: roll back to the previous slot (a plain reboot just aborts). */
export function postBootFailure(state: ActiveState, failure: Failure, now: number): Transition {
  if (state.op.kind === 'reboot') return abort(state, failure, now);
  const op = {
    ...state.op,
    failure,
    rollbackReason: 'HealthDeadline' as const,
    rollbackAttempts: 1,
  };
  return enter({ ...state, op }, 'RollingBack');
}

type Handler = (state: ActiveState, event: StepFailed, now: number) => Transition;

const untouched: Handler = (s, e, now) => finish(s, now, failed(e.error), discardPull(s));
const aborts: Handler = (s, e, now) => abort(s, e.error, now);
const rollsBack: Handler = (s, e, now) => postBootFailure(s, e.error, now);

const ON_FAILED: Partial<Record<Phase, Handler>> = {
  Pulling: untouched,
  CheckingRollbackTarget: untouched,
  ...Object.fromEntries(PreRebootPhases.map((phase) => [phase, aborts])),
  // ExtendLeaseForReboot (or the reboot request) failed: nothing rebooted yet, so abort.
  Rebooting: aborts,
  // An undo step failed: stop there, run the rest best-effort, report the original failure.
  Aborting: (s, e, now) => {
    const cause = s.op.failure ?? e.error;
    const reason = `${cause.message}; then undo step ${e.command} failed: ${e.error.message}`;
    const rest = after(phaseCommands(s), e.command);
    return finish(s, now, { result: 'Failed', code: cause.code, reason }, [
      ...rest,
      ...discardPull(s),
    ]);
  },
  Rejoining: rollsBack,
  HealthChecking: rollsBack,
  Committing: rollsBack,
  // Committed already: the node runs the new slot; report that it is still cordoned / leased.
  Uncordoning: (s, e, now) => {
    const reason = `slot ${s.op.target} committed, but Uncordon failed: ${e.error.message}`;
    const release: Command[] = holdsLease(s.undo)
      ? [{ type: 'ReleaseLease', operationId: s.op.id }]
      : [];
    return finish(s, now, { result: 'Failed', code: e.error.code, reason }, release);
  },
  ReleasingLease: (s, e, now) => {
    const reason = `slot ${s.op.target} committed, but ReleaseLease failed (it expires by TTL): ${e.error.message}`;
    return finish(s, now, { result: 'Failed', code: e.error.code, reason });
  },
  // Not marked bad: reboot anyway (the boot-once is consumed, the previous slot boots). If the
  // reboot itself fails, wait in RollingBack for the next boot.
  RollingBack: (s, e) => ({
    state: s,
    commands: e.command === 'MarkSlotBad' ? [{ type: 'Reboot' }] : [],
  }),
  Recovering: (s, e, now) => {
    const reason = `back on slot ${s.bootedSlot ?? s.op.previous} (${s.op.rollbackReason ?? 'rolled back'}), but ${e.command} failed: ${e.error.message}`;
    return finish(
      s,
      now,
      { result: 'Failed', code: e.error.code, reason },
      after(phaseCommands(s), e.command),
    );
  },
};

export function onStepFailed(
  state: ActiveState,
  event: StepFailed,
  now: number,
): Transition | IllegalTransition {
  const handler = ON_FAILED[state.phase];
  if (handler === undefined) return illegal(`no step runs in ${state.phase}`);
  if (!phaseCommands(state).some((c) => c.type === event.command)) {
    return illegal(`${state.phase} did not issue ${event.command}`);
  }
  return handler(state, event, now);
}

/** A passed health deadline in Rejoining / HealthChecking rolls back; any other Tick changes nothing. */
export function onTick(state: ActiveState, now: number): Transition {
  const { op } = state;
  const checking = state.phase === 'Rejoining' || state.phase === 'HealthChecking';
  if (!checking || op.deadline === undefined || now < op.deadline) return { state, commands: [] };
  const failure: StepError = {
    code: ErrorCode.HealthDeadline,
    message: `slot ${op.target} was not healthy within ${op.healthDeadlineMs} ms of booting`,
  };
  return postBootFailure(state, failure, now);
}
