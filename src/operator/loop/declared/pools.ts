// SPDX-License-Identifier: Apache-2.0
/**
 * Pool objects: the pools every pass plans with (the fleet file's, then the accepted objects'),
 * the rollouts of a pool being deleted cancelled, and its deletion let through once nothing of
 * it is in flight.
 */
import type { Pool } from '../../../core/rollout/types.ts';
import { declaredPools, deletions } from '../../decide/declared.ts';
import type { RolloutActions } from './rollouts.ts';
import { inputOf, type DeclaredController, type DeclaredDeps } from './controller.ts';

export function poolController(d: DeclaredDeps, act: RolloutActions): DeclaredController {
  let lastAccepted = new Map<string, Pool>();
  return {
    async apply(pass) {
      const input = inputOf(d, pass, lastAccepted);
      const plan = declaredPools(input);
      d.setPools(plan.pools);
      lastAccepted = new Map(plan.accepted);
      await act(deletions(input));
      for (const pool of plan.release) {
        await d.source.release(pool);
        d.log(`declared: pool ${pool} deleted; nothing of it was in flight any more`);
      }
      return plan.verdicts;
    },
  };
}
