// SPDX-License-Identifier: Apache-2.0
/**
 * Rollout objects' specs: pause, resume, approve, cancel and roll back, by level, through the same
 * `actions/` a person's request takes. A refusal is a Warning Event on the object and one log line.
 */
import { isMoltError } from '../../../core/errors.ts';
import type { Identity } from '../../../platform/https/identity.ts';
import { rollbackOn } from '../../actions/rollback.ts';
import { actOn } from '../../actions/rollout-action.ts';
import { requestedActions, type ActionStep } from '../../decide/declared.ts';
import { inputOf, type DeclaredController, type DeclaredDeps, type Once } from './controller.ts';

/** Carry out `steps` in order; a refused one is said, not thrown. */
export type RolloutActions = (steps: readonly ActionStep[]) => Promise<void>;

export function rolloutActions(d: DeclaredDeps, once: Once): RolloutActions {
  const run = async (s: ActionStep): Promise<void> => {
    const who: Identity = { name: s.by, role: 'operator' };
    try {
      if (s.action === 'rollback') await rollbackOn(d, { id: s.rollout, who, reason: s.reason });
      else await actOn(d, { id: s.rollout, action: s.action, who, force: false, reason: s.reason });
    } catch (e) {
      if (!isMoltError(e)) throw e;
      const message = `${s.reason}: ${s.action} refused: ${e.message}`;
      once(`${s.rollout}/${s.action}/${e.message}`, `declared: ${message}`);
      await d.source.warn(s.rollout, 'SpecRefused', message);
    }
  };
  return async (steps) => {
    for (const s of steps) await run(s);
  };
}

/** The Rollout objects' controller: their verdicts are the status mirror's, not written here. */
export function rolloutController(d: DeclaredDeps, act: RolloutActions): DeclaredController {
  return {
    async apply(pass) {
      await act(requestedActions(inputOf(d, pass)));
      return [];
    },
  };
}
