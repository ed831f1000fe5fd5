// SPDX-License-Identifier: Apache-2.0
/**
 * The planner's input as the API sees it: the stored state plus the loop's last observation of
 * each machine — the same snapshot a reconcile pass builds (`runtime/reconcile.ts`), so
 * `GET /v1/plan` shows what the next pass would decide if nothing changed meanwhile.
 */
import { explain, plan } from '../../core/rollout/index.ts';
import type { FleetSnapshot, Plan, Policy, Pool } from '../../core/rollout/types.ts';
import type { Refusal } from '../../core/rollout/index.ts';
import type { StoredState } from '../ports/store.ts';
import { plannerMachine } from '../runtime/observation.ts';
import type { ObservationBook } from './observations.ts';
import { decisionKey, type DecisionIndex } from './views.ts';

/** The fleet file's pools and fleet-wide policies. */
export interface FleetPolicies {
  readonly pools: readonly Pool[];
  readonly fleetPolicies: readonly Policy[];
}

export function snapshotOf(
  stored: StoredState,
  book: ObservationBook,
  fleet: FleetPolicies,
): FleetSnapshot {
  return {
    machines: stored.machines.map((m) => plannerMachine(m, book.get(m.id), stored.holds[m.id])),
    pools: fleet.pools,
    fleetPolicies: fleet.fleetPolicies,
    rollouts: stored.rollouts,
    starts: stored.starts,
  };
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
