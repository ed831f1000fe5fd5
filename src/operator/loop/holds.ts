// SPDX-License-Identifier: Apache-2.0
/**
 * Each pass, the store's holds are brought to the agents that answered (`decide/holds.ts`): a hold
 * the API could not push, because the agent was away, reaches it once it answers; a failure is
 * logged and tried again at the next pass. The store's hold stands meanwhile: the planner starts
 * no upgrade on the machine either way.
 */
import { errorLine } from '../../core/errors.ts';
import type { StoredState } from '../ports/store.ts';
import { holdStep } from '../decide/holds.ts';
import type { Observation } from '../decide/observation.ts';
import type { ReconcileDeps } from './deps.ts';
import type { ObservedState } from './observe.ts';
import { instant } from '../../core/time.ts';

/**
 * Push what differs to each machine whose agent answered; `agents` (this pass's observations) and
 * the pass state are told what the agent keeps now, so this pass plans with it and a kept
 * observation does not push it again at the next.
 */
export async function syncHolds(
  d: ReconcileDeps,
  stored: Pick<StoredState, 'machines' | 'holds'>,
  state: ObservedState,
  agents: Map<string, Observation>,
): Promise<void> {
  for (const m of stored.machines) {
    const seen = state.observations.get(m.id);
    const step = holdStep(stored.holds[m.id], seen?.status?.hold, d.now());
    if (step.kind === 'none' || seen?.status === undefined) continue;
    const what = step.kind === 'set' ? `hold until ${instant(step.hold.until)}` : 'release';
    try {
      const { hold } =
        step.kind === 'set' ? await d.agents.setHold(m, step.hold) : await d.agents.clearHold(m);
      const now: Observation = { ...seen, status: { ...seen.status, hold } };
      state.observations.set(m.id, now);
      agents.set(m.id, now);
      d.log(`${m.id}: ${what} pushed to its agent`);
    } catch (e) {
      d.log(`${m.id}: ${what} not pushed to its agent, trying again next pass: ${errorLine(e)}`);
    }
  }
}
