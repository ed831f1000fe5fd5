// SPDX-License-Identifier: Apache-2.0
// Builders shared by the rollout tests (no tests here; a *.test.ts name keeps it out of dist).
import assert from 'node:assert/strict';
import type {
  FleetSnapshot,
  Machine,
  MachineDecision,
  MachineProgress,
  Plan,
  Policy,
  Pool,
  Rollout,
} from './types.ts';

export const T0 = Date.parse('2026-11-23T12:00:00.000Z');
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const OLD = 'sha256:old';
export const NEW = 'sha256:new';

export function machine(id: string, over: Partial<Machine> = {}): Machine {
  return {
    id,
    role: 'worker',
    pool: 'workers',
    labels: {},
    digest: OLD,
    version: '1.0.0',
    available: true,
    ...over,
  };
}

/** `n` workers `w00`… in pool `pool`. */
export const workers = (n: number, pool = 'workers', over: Partial<Machine> = {}): Machine[] =>
  Array.from({ length: n }, (_, i) =>
    machine(`${pool.slice(0, 1)}${String(i).padStart(2, '0')}`, { pool, ...over }),
  );

export function rollout(over: Partial<Rollout> = {}): Rollout {
  return {
    id: 'r1',
    pool: 'workers',
    target: { version: '2.0.0', digest: NEW },
    state: 'Active',
    createdAt: T0 - HOUR,
    machines: {},
    ...over,
  };
}

export function snapshot(
  over: Partial<FleetSnapshot> & { policies?: Policy[] } = {},
): FleetSnapshot {
  const { policies = [], ...rest } = over;
  const pools: Pool[] = [{ name: 'workers', policies }];
  return {
    machines: workers(4),
    pools,
    fleetPolicies: [],
    rollouts: [rollout()],
    starts: [],
    ...rest,
  };
}

export const inFlight = (startedAt = T0 - MIN): MachineProgress => ({
  phase: 'InFlight',
  startedAt,
});
export const succeeded = (finishedAt: number): MachineProgress => ({
  phase: 'Succeeded',
  startedAt: finishedAt - MIN,
  finishedAt,
});
export const failed = (finishedAt: number): MachineProgress => ({
  phase: 'Failed',
  startedAt: finishedAt - MIN,
  finishedAt,
  reason: 'health checks failed',
});

export const started = (p: Plan): string[] =>
  p.decisions.filter((d) => d.action === 'start').map((d) => d.machine);

export function decisionOf(p: Plan, machineId: string, rolloutId = 'r1'): MachineDecision {
  const d = p.decisions.find((x) => x.machine === machineId && x.rollout === rolloutId);
  assert.ok(d, `no decision for ${rolloutId}/${machineId}`);
  return d;
}

export const codeOf = (p: Plan, machineId: string, rolloutId = 'r1'): string | undefined =>
  decisionOf(p, machineId, rolloutId).reason?.code;
