// SPDX-License-Identifier: Apache-2.0
/** The coordinated fleet rollback of a rollout (docs/adr/0005 "Health gates, pausing, fleet rollback"). */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { imageRollbackOf } from '../../core/images/rollback.ts';
import type { Pool, Rollout } from '../../core/rollout/types.ts';

/**
 * The coordinated fleet rollback of `original` (issue 4): a new Active rollout of the same pool
 * back to what it ran before, under the same policies. `MOLT_ROLLOUT_STATE` when `original` has
 * no `from`, is itself a rollback, or is still running (pause or halt it first).
 */
export function rollbackRolloutOf(original: Rollout, now: number): Rollout {
  const refuse = (why: string): MoltError =>
    new MoltError(ErrorCode.RolloutState, `rollout ${original.id} cannot be rolled back: ${why}`, {
      details: { rollout: original.id, state: original.state, action: 'rollback' },
    });
  if (original.state === 'Active' || original.state === 'AwaitingApproval')
    throw refuse(`it is ${original.state}; pause it first (molt rollout pause ${original.id})`);
  if (original.rollbackOf !== undefined)
    throw refuse('it is a rollback itself; roll forward with a new release');
  // An image rollout puts back each workload it changed, on the image that workload ran.
  if (original.images !== undefined)
    return imageRollbackOf({ ...original, images: original.images }, now);
  if (original.from === undefined)
    throw refuse('it does not record the release the pool ran before');
  return {
    id: `${original.id}-rollback`,
    pool: original.pool,
    target: original.from,
    state: 'Active',
    createdAt: now,
    machines: {},
    from: original.target,
    rollbackOf: original.id,
    // A targeted rollout's rollback moves back only the machines it targeted.
    ...(original.only !== undefined && { only: original.only }),
  };
}

/**
 * The fleet rollbacks pools with `onHalt: rollback` make by themselves: one for each Halted
 * rollout of theirs that records `from`, is not a rollback itself, and has no rollback yet.
 * Level-based, so an operator stopped between the halt and the rollback makes it on restart.
 */
export function automaticRollbacks(
  pools: readonly Pool[],
  rollouts: readonly Rollout[],
  now: number,
): Rollout[] {
  const ids = new Set(rollouts.map((r) => r.id));
  const rollingBack = new Set(pools.filter((p) => p.onHalt === 'rollback').map((p) => p.name));
  return rollouts
    .filter((r) => r.state === 'Halted' && rollingBack.has(r.pool))
    .filter((r) => r.rollbackOf === undefined && r.from !== undefined)
    .map((r) => rollbackRolloutOf(r, now))
    .filter((back) => !ids.has(back.id));
}

/**
 * Halted rollouts a fleet rollback reverses (a person's or the pool's own): they end Superseded,
 * naming the rollback, so nothing shows them as waiting for a person any more.
 */
export function haltedAndRolledBack(
  rollouts: readonly Rollout[],
): { readonly rollout: string; readonly reason: string }[] {
  const backs = new Map(
    rollouts.flatMap((r) => (r.rollbackOf === undefined ? [] : [[r.rollbackOf, r] as const])),
  );
  return rollouts.flatMap((r) => {
    const back = r.state === 'Halted' ? backs.get(r.id) : undefined;
    return back === undefined
      ? []
      : [{ rollout: r.id, reason: `rolled back by ${back.id} (to ${back.target.version})` }];
  });
}
