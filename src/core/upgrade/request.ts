// SPDX-License-Identifier: Apache-2.0
/** Admission and the `Requested` event: one operation at a time; `Staged` accepts only a reboot. */
import { ErrorCode } from '../errors.ts';
import { otherSlot } from '../slots/slot.ts';
import type { OperationKind, OperationRequest } from './events.ts';
import { illegal, type IllegalTransition } from './illegal.ts';
import type { Phase } from './phase.ts';
import { enter, type ActiveState } from './phase-commands.ts';
import { preRebootPlan } from './plan.ts';
import type { Operation, Transition, UpgradeState } from './state.ts';

export type Admission =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly code: typeof ErrorCode.AgentBusy;
      readonly message: string;
      readonly details: {
        readonly operationId: string;
        readonly kind: OperationKind;
        readonly phase: Phase;
      };
    };

/** Whether a request of `kind` may start now; the API asks before feeding `Requested`. */
export function admission(state: UpgradeState, kind: OperationKind): Admission {
  const { op } = state;
  if (state.phase === 'Idle' || op === undefined) return { ok: true };
  if (state.phase === 'Staged' && kind === 'reboot') return { ok: true };
  const staged = state.phase === 'Staged' ? ' (staged: only a reboot is accepted)' : '';
  return {
    ok: false,
    code: ErrorCode.AgentBusy,
    message: `the agent is busy with ${op.kind} ${op.id} in phase ${state.phase}${staged}`,
    details: { operationId: op.id, kind: op.kind, phase: state.phase },
  };
}

function newOperation(
  request: OperationRequest,
  booted: Operation['target'],
  now: number,
): Operation {
  return {
    id: request.id,
    kind: request.kind,
    ...(request.image === undefined ? {} : { image: request.image }),
    preserve: request.preserve,
    // Staging means "write now, switch at the next reboot": only an upgrade writes a slot.
    stage: request.kind === 'upgrade' && request.stage,
    force: request.force,
    ...(request.acceptQuorumLoss === true && { acceptQuorumLoss: true }),
    controlPlane: request.controlPlane,
    healthDeadlineMs: request.healthDeadlineMs,
    ...(request.drain !== undefined && { drain: request.drain }),
    target: request.kind === 'reboot' ? booted : otherSlot(booted),
    previous: booted,
    startedAt: now,
  };
}

function start(state: ActiveState): Transition {
  const first = preRebootPlan(state.op)[0] ?? 'Rebooting';
  return enter(state, first);
}

/**
 * `Requested` in `Idle` starts an operation. In `Staged`, a reboot request continues the staged
 * operation (same id): the node is taken out of service and rebooted into the armed slot.
 */
export function onRequested(
  state: UpgradeState,
  request: OperationRequest,
  now: number,
): Transition | IllegalTransition {
  const verdict = admission(state, request.kind);
  if (!verdict.ok) return illegal(verdict.message);
  if (state.phase === 'Staged' && state.op !== undefined) {
    return start({
      ...state,
      op: {
        ...state.op,
        ...{ stage: false, fromStaged: true, force: request.force },
        acceptQuorumLoss: request.acceptQuorumLoss === true,
      },
    });
  }
  if (state.bootedSlot === undefined) return illegal('Requested before the first Booted event');
  if (request.kind === 'upgrade' && request.image === undefined)
    return illegal('an upgrade request needs an image');
  return start({ ...state, op: newOperation(request, state.bootedSlot, now) });
}
