// SPDX-License-Identifier: Apache-2.0
/**
 * The planner's input as the API sees it: the stored state plus the loop's last observation of
 * each machine and gate — built by the same `fleetSnapshot` a reconcile pass uses, so
 * `GET /v1/plan` shows what the next pass would decide if nothing changed meanwhile.
 */
import { explain, plan } from '../../core/rollout/index.ts';
import type { FleetSnapshot, Plan, Rollout } from '../../core/rollout/types.ts';
import type { Refusal } from '../../core/rollout/index.ts';
import type { StoredState } from '../ports/store.ts';
import { fleetSnapshot, type FleetPolicies } from '../decide/snapshot.ts';
import type { ObservationBook } from './observations.ts';
import { decisionKey, type DecisionIndex } from './views.ts';

/** The snapshot the loop's next pass would plan on: stored state, last observations, last gates. */
export function snapshotOf(
  stored: StoredState,
  book: ObservationBook,
  fleet: FleetPolicies,
): FleetSnapshot {
  return fleetSnapshot(stored, { agent: (id) => book.get(id), gates: book.gates() }, fleet);
}

/** The plan now, and its decisions indexed by `rollout/machine`. */
export function planNow(
  snapshot: FleetSnapshot,
  now: number,
): { plan: Plan; index: DecisionIndex } {
  const p = plan(snapshot, now);
  return {
    plan: p,
    index: new Map(p.decisions.map((d) => [decisionKey(d.rollout, d.machine), d])),
  };
}

/** Every refusing check of each waiting machine, by `rollout/machine`. */
export function refusalsNow(snapshot: FleetSnapshot, now: number): Map<string, Refusal[]> {
  return explain(snapshot, now);
}

/**
 * `rollout/machine` of each machine a rollout staged ahead whose agent still holds it staged
 * (docs/adr/0019): what the last observation says, as the loop would apply it.
 */
export function stagedNow(rollouts: readonly Rollout[], book: ObservationBook): Set<string> {
  const keys = new Set<string>();
  for (const r of rollouts)
    for (const [machine, { operationId }] of Object.entries(r.staged ?? {})) {
      const status = book.get(machine)?.status;
      if (status?.phase === 'Staged' && status.operation?.id === operationId)
        keys.add(decisionKey(r.id, machine));
    }
  return keys;
}
