// SPDX-License-Identifier: Apache-2.0
/** The coordinated fleet rollback of a rollout (docs/adr/0005 "Health gates, pausing, fleet rollback"). */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Rollout } from '../../core/rollout/types.ts';

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
  };
}
