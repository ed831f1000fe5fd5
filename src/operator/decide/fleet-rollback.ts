// SPDX-License-Identifier: Apache-2.0
/** The coordinated fleet rollback of a rollout (docs/adr/0005 "Health gates, pausing, fleet rollback"). */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { imageRollbackOf } from '../../core/images/rollback.ts';
import type { Pool, Rollout } from '../../core/rollout/types.ts';

/**
 * The coordinated fleet rollback of `original`: a new Active rollout of the same pool
 * back to what it ran before, under the same policies. `MOLT_ROLLOUT_STATE` when `original` has
 * no `from`, is itself a rollback, is rolled back already, or is still running (pause or halt it
 * first).
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
  if (original.state === 'RolledBack')
    throw refuse(`it is rolled back already (${original.endReason ?? 'by its rollback'})`);
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

/** The states a rollout a fleet rollback reverses leaves for `RolledBack`. */
export const reversible = (state: Rollout['state']): boolean =>
  state === 'Halted' || state === 'Paused' || state === 'Completed';

/** A rollout a fleet rollback reverses, and that rollback. */
export interface Reversed {
  readonly rollout: Rollout;
  readonly back: Rollout;
}

/**
 * The rollouts a fleet rollback (a person's or the pool's own) reverses and that have not ended
 * `RolledBack` yet: halted, paused or completed ones. Level-based, so a rollback whose original
 * was not ended (an operator stopped between the two writes) is finished on the next pass.
 */
export function reversedByRollbacks(rollouts: readonly Rollout[]): Reversed[] {
  const byId = new Map(rollouts.map((r) => [r.id, r] as const));
  return rollouts.flatMap((back) => {
    const rollout = back.rollbackOf === undefined ? undefined : byId.get(back.rollbackOf);
    return rollout === undefined || !reversible(rollout.state) ? [] : [{ rollout, back }];
  });
}
