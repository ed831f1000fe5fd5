// SPDX-License-Identifier: Apache-2.0
/**
 * Admission, the `Requested` event and `Discarded`: one operation at a time; `Staged` accepts only
 * the reboot that applies it, or its discarding.
 */
import { ErrorCode } from '../errors.ts';
import { otherSlot } from '../slots/slot.ts';
import type { OperationKind, OperationRequest } from './events.ts';
import { discardPull, finish } from './finish.ts';
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
  const staged =
    state.phase === 'Staged'
      ? ' (staged: a reboot applies it, a cancel discards it; nothing else is accepted)'
      : '';
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
    // Staging means "write and verify now, switch when applied": only an upgrade writes a slot.
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
 * `Requested` in `Idle` starts an operation. In `Staged`, a reboot request applies the staged
 * operation (same id): the slot is verified again, the node taken out of service, the slot armed
 * and booted.
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

/**
 * The staged upgrade is dropped before it was applied: nothing was disrupted or armed, so the
 * operation just ends (Failed, `MOLT_CANCELLED`, saying by whom); the written slot stays
 * `writing`, which no bootloader entry points at, until the next upgrade overwrites it.
 */
export function onDiscarded(
  state: UpgradeState,
  by: string,
  now: number,
): Transition | IllegalTransition {
  if (state.phase !== 'Staged' || state.op === undefined)
    return illegal(`Discarded while ${state.phase}: only a staged upgrade can be discarded`);
  const version = state.op.pulled?.version;
  const what = version === undefined ? 'the staged upgrade' : `the staged upgrade to ${version}`;
  const staged = { ...state, op: state.op };
  return finish(
    staged,
    now,
    { result: 'Failed', code: ErrorCode.Cancelled, reason: `${what} was discarded by ${by}` },
    discardPull(staged),
  );
}
