// SPDX-License-Identifier: Apache-2.0
/**
 * The planner's input (core's `FleetSnapshot`): the stored state, what was last seen of each
 * machine's agent, and the last result of each health gate. The one builder for both the reconcile
 * pass and the API (`GET /v1/plan`, rollout views), so the plan the API shows is the plan the
 * next pass makes if nothing changes meanwhile.
 */
import type {
  ClusterPolicy,
  FleetSnapshot,
  GateResult,
  Policy,
  Pool,
} from '../../core/rollout/types.ts';
import { isEnded } from '../../core/rollout/vocabulary.ts';
import { workloadRefOf } from '../../core/images/workload.ts';
import type { StoredState } from '../ports/store.ts';
import { plannerMachine, type Observation } from './observation.ts';

/** The fleet file's pools and fleet-wide policies. */
export interface FleetPolicies {
  readonly pools: readonly Pool[];
  readonly fleetPolicies: readonly Policy[];
  readonly clusters?: readonly ClusterPolicy[] | undefined;
}

/** What was last seen: each machine's agent (by id) and each gate (by name). */
export interface Seen {
  readonly agent: (machine: string) => Observation | undefined;
  readonly gates: Readonly<Record<string, GateResult>>;
}

/**
 * The stored state without the image rollouts and their starts (docs/adr/0013 decision 9): the
 * machine loop's part. Image rollouts are the image driver's; their units are workloads.
 */
export function machinePart(stored: StoredState): StoredState {
  const images = new Set(stored.rollouts.filter((r) => r.images !== undefined).map((r) => r.id));
  if (images.size === 0 && !stored.starts.some((s) => workloadRefOf(s.machine) !== undefined))
    return stored;
  return {
    ...stored,
    rollouts: stored.rollouts.filter((r) => !images.has(r.id)),
    starts: stored.starts.filter(
      (s) => !images.has(s.rollout) && workloadRefOf(s.machine) === undefined,
    ),
  };
}

export function fleetSnapshot(all: StoredState, seen: Seen, fleet: FleetPolicies): FleetSnapshot {
  const stored = machinePart(all);
  return {
    machines: stored.machines.map((m) => plannerMachine(m, seen.agent(m.id), stored.holds[m.id])),
    pools: withUnknownFrozen(fleet.pools, stored),
    fleetPolicies: fleet.fleetPolicies,
    // Superseded and cancelled rollouts are over: nothing is planned, nothing waits on them.
    rollouts: stored.rollouts.filter((r) => r.state === 'Completed' || !isEnded(r.state)),
    starts: stored.starts,
    gates: seen.gates,
    ...(fleet.clusters !== undefined && { clusters: fleet.clusters }),
  };
}

/**
 * Pools that machines or unfinished rollouts name but the settings do not define — a declared
 * `Pool` not read yet after a restart while its cluster is away, or deleted — are frozen: nothing
 * of them starts. Left out, the planner would see a pool without policies, which limits nothing.
 */
function withUnknownFrozen(pools: readonly Pool[], stored: StoredState): readonly Pool[] {
  const known = new Set(pools.map((p) => p.name));
  const named = [
    ...stored.machines.map((m) => m.pool),
    ...stored.rollouts.filter((r) => !isEnded(r.state)).map((r) => r.pool),
  ];
  const unknown = [...new Set(named)].filter((n) => !known.has(n));
  if (unknown.length === 0) return pools;
  return [
    ...pools,
    ...unknown.map((name): Pool => ({
      name,
      policies: [{ kind: 'concurrency', limit: { count: 0 } }],
    })),
  ];
}
