// SPDX-License-Identifier: Apache-2.0
/**
 * Fleet rollbacks of halted rollouts: a pool with `onHalt: rollback` rolls itself back
 * to the release it ran before, and a rollout a rollback reverses (the pool's or a person's
 * `molt rollout rollback`) ends RolledBack with its release blocked for the pool. Level-based on
 * the pass's stored state, so an operator stopped half-way finishes the job on its next pass.
 */
import type { Rollout } from '../../core/rollout/types.ts';
import { automaticRollbacks, reversedByRollbacks } from '../decide/fleet-rollback.ts';
import type { TransitionSink } from '../transitions/record.ts';
import { createRecorded } from '../transitions/rollout-created.ts';
import type { ReconcileDeps } from './deps.ts';
import { endRolledBack } from '../transitions/rolled-back.ts';

export async function createRollback(d: TransitionSink, back: Rollout): Promise<void> {
  const message = `rollout ${back.id}: pool ${back.pool} back to ${back.target.version}, rolling back the halted ${back.rollbackOf ?? ''} (${back.images === undefined ? 'pool' : 'image'} policy onHalt: rollback)`;
  // A person may ask for the same rollback at the same time.
  await createRecorded(d, back, {
    message,
    data: { target: back.target, rollbackOf: back.rollbackOf, by: 'operator' },
    ifAbsent: true,
  });
}

export async function rollBackHalted(
  d: ReconcileDeps,
  rollouts: readonly Rollout[],
): Promise<void> {
  const backs = automaticRollbacks(d.settings.pools, rollouts, d.now());
  for (const back of backs) await createRollback(d, back);
  for (const x of reversedByRollbacks([...rollouts, ...backs]))
    await endRolledBack(d, x, { by: 'operator' });
}
