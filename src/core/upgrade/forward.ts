// SPDX-License-Identifier: Apache-2.0
/** `StepDone`: the phase's commands all succeeded (or were skipped); go to the next phase. */
import { ErrorCode } from '../errors.ts';
import type { CommandOutcome, UpgradeEvent } from './events.ts';
import { discardPull, finish, type Outcome } from './finish.ts';
import { illegal, type IllegalTransition } from './illegal.ts';
import type { Phase } from './phase.ts';
import { enter, type ActiveState } from './phase-commands.ts';
import { nextPhase } from './plan.ts';
import type { Operation, Transition } from './state.ts';
import { dropUndo } from './undo.ts';

type StepDone = Extract<UpgradeEvent, { type: 'StepDone' }>;

/** Phases whose commands never report back: quiescent ones, and those ending in `Reboot`. */
const NO_RESULT: readonly Phase[] = ['Idle', 'Staged', 'Rebooting', 'RollingBack'];

/** Copy what the commands returned into the operation. */
function absorb(op: Operation, outcomes: readonly CommandOutcome[]): Operation {
  let next = op;
  for (const { data } of outcomes) {
    if (data?.pulled !== undefined) next = { ...next, pulled: data.pulled };
    if (data?.leaseId !== undefined) next = { ...next, leaseId: data.leaseId };
    if (data?.etcdDown === true) next = { ...next, etcdDown: true };
  }
  return next;
}

function success(op: Operation): Outcome {
  return op.kind === 'rollback'
    ? { result: 'RolledBack', reason: 'manual' }
    : { result: 'Succeeded' };
}

function advance(state: ActiveState, event: StepDone, now: number): Transition | IllegalTransition {
  const op = absorb(state.op, event.outcomes);
  // The forward steps that are undo steps too: done now, nothing left to undo.
  let undo = state.undo;
  if (state.phase === 'Uncordoning') undo = dropUndo(undo, 'Uncordon');
  if (state.phase === 'ReleasingLease') undo = dropUndo(undo, 'ReleaseLease');
  const next = nextPhase(op, state.phase);
  if (next === undefined)
    return illegal(`${state.phase} is not on the path of ${op.kind} ${op.id}`);
  const advanced: ActiveState = { ...state, op, undo };
  if (next === 'Idle') return finish(advanced, now, success(op));
  return enter(advanced, next);
}

export function onStepDone(
  state: ActiveState,
  event: StepDone,
  now: number,
): Transition | IllegalTransition {
  if (NO_RESULT.includes(state.phase)) return illegal(`no result is expected in ${state.phase}`);
  const { op } = state;
  if (state.phase === 'Aborting') {
    const failure = op.failure ?? { code: ErrorCode.Internal, message: 'aborted' };
    return finish(
      state,
      now,
      { result: 'Failed', code: failure.code, reason: failure.message },
      discardPull(state),
    );
  }
  if (state.phase === 'Recovering') {
    const outcome: Outcome = {
      result: 'RolledBack',
      reason: op.rollbackReason ?? 'BootFailed',
      ...(op.failure === undefined ? {} : { code: op.failure.code, message: op.failure.message }),
    };
    return finish(state, now, outcome);
  }
  return advance(state, event, now);
}
