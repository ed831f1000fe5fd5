// SPDX-License-Identifier: Apache-2.0
/**
 * A person's fleet rollback (`POST /v1/rollouts/:id/rollback`, and a declared Rollout's
 * `spec.rollback`): the rollback rollout created once, then the original ended `RolledBack` with
 * its release blocked for the pool (`transitions/rolled-back.ts`).
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import type { Identity } from '../../platform/https/identity.ts';
import { rollbackRolloutOf } from '../decide/fleet-rollback.ts';
import type { StoredState } from '../ports/store.ts';
import { recordTransition, type TransitionSink } from '../transitions/record.ts';
import { endRolledBack } from '../transitions/rolled-back.ts';

/** The stored rollout `id`; `MOLT_ROLLOUT_NOT_FOUND` when there is none. */
export function findRollout(stored: StoredState, id: string): Rollout {
  const r = stored.rollouts.find((x) => x.id === id);
  if (r === undefined)
    throw new MoltError(ErrorCode.RolloutNotFound, `the operator has no rollout ${id}`, {
      hint: 'list them with `molt rollout list`',
    });
  return r;
}

/** Who asks for a fleet rollback, and why. */
export interface RollbackRequest {
  readonly id: string;
  readonly who: Identity;
  readonly reason?: string | undefined;
}

/**
 * The fleet rollback of a rollout, created and recorded once (the API's and a declared spec's);
 * answers its id and whether this call made it.
 */
export async function rollbackOn(
  sink: TransitionSink,
  a: RollbackRequest,
): Promise<{ id: string; changed: boolean }> {
  const stored = await sink.store.read();
  const original = findRollout(stored, a.id);
  // Asked again (a retry, a declared spec's every pass): the rollback there is, unchanged.
  const made = stored.rollouts.find((r) => r.rollbackOf === original.id);
  if (made !== undefined) return { id: made.id, changed: false };
  const back = rollbackRolloutOf(original, sink.now());
  const why = a.reason === undefined ? '' : `: ${a.reason}`;
  await recordTransition(sink, {
    write: (store) => store.createRollout(back),
    record: {
      event: {
        kind: 'rollout-created',
        rollout: back.id,
        message: `rollout ${a.id} rolled back by ${a.who.name} to ${back.target.version}${why}`,
        data: { target: back.target, rollbackOf: a.id, by: a.who.name },
      },
    },
  });
  await endRolledBack(sink, { rollout: original, back }, { by: a.who.name, reason: a.reason });
  return { id: back.id, changed: true };
}
