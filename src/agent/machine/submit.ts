// SPDX-License-Identifier: Apache-2.0
/** Small pieces of the runner: requests, busy answers, step errors, deadlines. */
import type { DrainOverride } from '../../core/drain/pods.ts';
import { ErrorCode, errorMessage, isMoltError, MoltError } from '../../core/errors.ts';
import { otherSlot } from '../../core/slots/slot.ts';
import {
  RequestDefaults,
  type OperationKind,
  type OperationRequest,
  type StepError,
} from '../../core/upgrade/events.ts';
import { Phase } from '../../core/upgrade/phase.ts';
import type { UpgradeState } from '../../core/upgrade/state.ts';
import type { Admission } from '../../core/upgrade/transition.ts';
import type { Clock } from '../ports/clock.ts';
import type { HeldRequest } from './hold.ts';
import type { MachinePorts } from './ports.ts';

export interface SubmitRequest {
  readonly kind: OperationKind;
  readonly image?: string;
  readonly preserve?: boolean;
  readonly stage?: boolean;
  readonly force?: boolean;
  readonly acceptQuorumLoss?: boolean;
  readonly drain?: DrainOverride;
  /** A reboot that must apply this staged operation, or be refused (MOLT_NOT_STAGED). */
  readonly apply?: string;
}

/** Refuse a reboot meant to apply staged operation `request.apply` when that is not what waits. */
export function requireStaged(state: UpgradeState, request: SubmitRequest): void {
  if (request.apply === undefined) return;
  if (state.phase === Phase.Staged && state.op?.id === request.apply) return;
  const now =
    state.op === undefined
      ? 'nothing is staged'
      : `${state.op.kind} ${state.op.id} is ${state.phase}`;
  throw new MoltError(
    ErrorCode.NotStaged,
    `staged operation ${request.apply} cannot be applied: ${now}`,
    { hint: 'molt node status shows what the machine has staged' },
  );
}

export function busy(verdict: Extract<Admission, { ok: false }>): MoltError {
  return new MoltError(ErrorCode.AgentBusy, verdict.message, {
    hint: `follow it with \`molt node events --operation ${verdict.details.operationId} --follow\``,
    details: verdict.details,
  });
}

export function operationRequest(
  id: string,
  request: SubmitRequest,
  facts: { readonly controlPlane: boolean; readonly healthDeadlineMs: number },
): OperationRequest {
  return {
    id,
    kind: request.kind,
    ...(request.image === undefined ? {} : { image: request.image }),
    preserve: request.preserve ?? RequestDefaults.preserve,
    stage: request.stage ?? RequestDefaults.stage,
    force: request.force ?? RequestDefaults.force,
    ...(request.acceptQuorumLoss === true && { acceptQuorumLoss: true }),
    controlPlane: facts.controlPlane,
    healthDeadlineMs: facts.healthDeadlineMs,
    ...(request.drain !== undefined && { drain: request.drain }),
  };
}

export function stepError(error: unknown): StepError {
  if (isMoltError(error)) {
    return {
      code: error.code,
      message: error.message,
      ...(error.code === ErrorCode.TimedOut ? { indeterminate: true } : {}),
    };
  }
  return {
    code: ErrorCode.Internal,
    message: errorMessage(error),
  };
}

/** Manual rollback needs a verified image and a valid boot entry in the other slot; refused before anything happens. */
export async function requireRollbackTarget(
  ports: MachinePorts,
  state: UpgradeState,
): Promise<void> {
  const booted = state.bootedSlot;
  if (booted === undefined) throw new MoltError(ErrorCode.Internal, 'the agent has not booted yet');
  const target = otherSlot(booted);
  const manifest = await ports.slots.manifest(target);
  if (manifest?.status !== 'ready') {
    throw new MoltError(
      ErrorCode.NoValidSlot,
      `cannot roll back: slot ${target} holds no valid image (${manifest?.status ?? 'empty'})`,
      {
        hint: 'a rollback switches to the other slot; it needs a verified image there',
      },
    );
  }
  // The entry is cheap to check: a bad one is answered at once (the bytes are re-hashed by
  // VerifyRollbackTarget, which checks the entry again, before any disruption).
  try {
    await ports.bootloader.checkEntry(target, manifest);
  } catch (error) {
    if (!isMoltError(error)) throw error;
    throw new MoltError(ErrorCode.NoValidSlot, `cannot roll back: ${error.message}`, {
      hint: 'a rollback boots the other slot through its boot entry; an upgrade writes both again',
      cause: error,
    });
  }
}

/** `work`, or MOLT_HEALTH_DEADLINE once `deadline` (epoch ms) passes first. */
export async function withDeadline<T>(
  work: Promise<T>,
  deadline: number | undefined,
  clock: Clock,
): Promise<T> {
  if (deadline === undefined) return work;
  const controller = new AbortController();
  const expired = clock.sleep(Math.max(0, deadline - clock.now()), controller.signal).then(() => {
    throw new MoltError(
      ErrorCode.HealthDeadline,
      'the new slot did not rejoin before its health deadline',
    );
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    controller.abort();
    expired.catch(() => undefined);
  }
}

/**
 * The request as a hold judges it: the reboot that applies a staged upgrade is that upgrade (a
 * power cut no longer applies one, so refusing it keeps the machine on its release).
 */
export function heldRequest(state: UpgradeState, request: SubmitRequest): HeldRequest {
  return state.phase === Phase.Staged && request.kind === 'reboot'
    ? { ...request, kind: 'upgrade' }
    : request;
}
