// SPDX-License-Identifier: Apache-2.0
/**
 * A small fleet for tests of the operator API and of `molt rollout` / `molt machine` (tests only;
 * belongs in `src/testkit/` once that layer may import operator ports): four workers and two
 * control-plane machines in a memory store, rollouts in every state, and API dependencies on the
 * memory adapters with a fixed clock.
 */
import type { Rollout } from '../core/rollout/types.ts';
import type { AgentStatus } from '../protocol/agent.ts';
import { MemoryFleetLockStore } from '../operator/adapters/memory-fleetlock/store.ts';
import type { MachineRecord } from '../operator/ports/store.ts';
import { MemoryOperatorStore } from '../operator/adapters/memory-store/operator-store.ts';
import type { OperatorApiDeps } from '../operator/api/context.ts';
import { OperatorMetrics } from '../operator/api/metrics.ts';
import { MemoryObservationBook } from '../operator/api/observations.ts';
import { fleetLockGroups } from '../operator/api/wiring.ts';
import { sampleStatus } from '../agent/api/service.fake.ts';

/** The fixed "now" of the fixture: 2026-11-24T10:00:00Z. */
export const fixtureNow = Date.parse('2026-11-24T10:00:00Z');
const minute = 60_000;

const machine = (id: string, pool: string, role: MachineRecord['role']): MachineRecord => ({
  id,
  endpoint: `https://${id}.lab:7443`,
  role,
  pool,
  labels: { zone: 'a' },
});

export const fixtureMachines: readonly MachineRecord[] = [
  machine('cp-1', 'cp', 'control-plane'),
  machine('cp-2', 'cp', 'control-plane'),
  machine('w-1', 'workers', 'worker'),
  machine('w-2', 'workers', 'worker'),
  machine('w-3', 'workers', 'worker'),
  machine('w-4', 'workers', 'worker'),
];

const target = (version: string): Rollout['target'] => ({
  version,
  digest: `sha256:${version.replaceAll('.', '').padEnd(64, '0')}`,
});

/** `workers-1.1.0` Active (w-1 done, w-2 in flight), `cp-1.1.0` awaiting approval, two finished. */
export const fixtureRollouts: readonly Rollout[] = [
  {
    id: 'workers-1.0.1',
    pool: 'workers',
    target: target('1.0.1'),
    state: 'Completed',
    createdAt: fixtureNow - 300 * minute,
    machines: {},
  },
  {
    id: 'cp-1.0.9',
    pool: 'cp',
    target: target('1.0.9'),
    from: target('1.0.8'),
    state: 'Halted',
    createdAt: fixtureNow - 200 * minute,
    machines: {
      'cp-1': { phase: 'RolledBack', startedAt: fixtureNow - 190 * minute, reason: 'unhealthy' },
      'cp-2': { phase: 'Succeeded', startedAt: fixtureNow - 180 * minute },
    },
  },
  {
    id: 'workers-1.1.0',
    pool: 'workers',
    target: target('1.1.0'),
    state: 'Active',
    createdAt: fixtureNow - 60 * minute,
    machines: {
      'w-1': {
        phase: 'Succeeded',
        startedAt: fixtureNow - 50 * minute,
        finishedAt: fixtureNow - 40 * minute,
      },
      'w-2': { phase: 'InFlight', startedAt: fixtureNow - 5 * minute, operationId: 'op-7' },
    },
  },
  {
    id: 'cp-1.1.0',
    pool: 'cp',
    target: target('1.1.0'),
    state: 'AwaitingApproval',
    createdAt: fixtureNow - 30 * minute,
    machines: {},
  },
];

/** An idle agent committed on 1.0.0. */
export function idleStatus(node: string): AgentStatus {
  return { ...sampleStatus(), node };
}

/** A seeded store, its history, observations of every worker, and deps over them. */
export async function apiFixture(): Promise<{
  store: MemoryOperatorStore;
  book: MemoryObservationBook;
  metrics: OperatorMetrics;
  deps: OperatorApiDeps;
}> {
  const store = new MemoryOperatorStore();
  for (const m of fixtureMachines) await store.putMachine(m);
  for (const r of fixtureRollouts) await store.createRollout(r);
  await store.appendHistory({
    at: fixtureNow - 60 * minute,
    kind: 'rollout-created',
    rollout: 'workers-1.1.0',
    message: 'rollout workers-1.1.0: pool workers to 1.1.0 (Active)',
  });
  await store.appendHistory({
    at: fixtureNow - 30 * minute,
    kind: 'rollout-created',
    rollout: 'cp-1.1.0',
    message: 'rollout cp-1.1.0: pool cp to 1.1.0 (AwaitingApproval)',
  });
  await store.appendHistory({
    at: fixtureNow - 5 * minute,
    kind: 'machine-start',
    rollout: 'workers-1.1.0',
    machine: 'w-2',
    message: 'w-2: upgrade to 1.1.0 accepted (operation op-7)',
  });
  const book = new MemoryObservationBook();
  for (const id of ['w-1', 'w-3', 'w-4'])
    book.set(id, { at: fixtureNow - 1000, status: idleStatus(id) });
  book.set('w-2', { at: fixtureNow - 1000, error: 'MOLT_AGENT_UNREACHABLE: rebooting' });
  const metrics = new OperatorMetrics();
  const fleet = {
    machines: [],
    pools: [
      { name: 'cp', requireApproval: true, policies: [] },
      { name: 'workers', policies: [{ kind: 'concurrency' as const, limit: { count: 1 } }] },
    ],
    fleetPolicies: [],
    rollouts: [],
    starts: [],
  };
  const deps: OperatorApiDeps = {
    store,
    observations: book,
    fleet,
    metrics,
    isLeader: () => true,
    fleetLock: { store: new MemoryFleetLockStore(), groups: fleetLockGroups(fleet) },
    now: () => fixtureNow,
    followPollMs: 20,
  };
  return { store, book, metrics, deps };
}
