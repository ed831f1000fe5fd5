// SPDX-License-Identifier: Apache-2.0
/** Rollouts, machines and starts for the operator store's conformance suite and the tests near it. */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { MachineProgress, Rollout, StartRecord } from '../core/rollout/types.ts';
import type { MachineRecord, OperatorStore } from '../operator/ports/store.ts';

let counter = 0;
/** A fresh id, so tests sharing one backend never see each other's rollouts. */
export const fresh = (what: string): string => `${what}-${process.pid}-${++counter}`;

export function rolloutFixture(id: string, machines: Rollout['machines'] = {}): Rollout {
  return {
    id,
    pool: 'workers',
    target: { version: '2.0.0', digest: `sha256:${'ab'.repeat(32)}` },
    state: 'Active',
    createdAt: 1_800_000_000_000,
    machines,
  };
}

/** A rollout with every optional field set: what a store must keep whole. */
export function fullRolloutFixture(id: string): Rollout {
  return {
    ...rolloutFixture(id),
    from: { version: '1.6.0', digest: `sha256:${'16'.repeat(32)}` },
    path: ['2.0.0', '2.1.0'],
    rollbackOf: 'workers-2.1.0-abababab',
    endReason: 'cancelled by alice',
    repairOf: 'workers-2.0.0-abababab',
    phased: { startFraction: 0.1, durationMs: 3_600_000 },
    only: ['w-1'],
    staged: { 'w-2': { operationId: 'op-staged', at: 1_700_000_000_000 } },
    images: {
      policy: 'web',
      repository: 'registry.lab:5000/web',
      units: {
        'Deployment/shop/web': {
          changes: [
            {
              container: 'web',
              from: `registry.lab:5000/web:1.2-rev1@sha256:${'a1'.repeat(32)}`,
              to: `registry.lab:5000/web:1.2-rev1@sha256:${'b2'.repeat(32)}`,
            },
          ],
        },
      },
    },
  };
}

export function machineFixture(id: string, labels: Record<string, string> = {}): MachineRecord {
  return { id, endpoint: `https://${id}.lab:7443`, role: 'worker', pool: 'workers', labels };
}

/** `xs[i]`, asserted present (lint forbids `!` outside test files). */
export function nth<T>(xs: readonly T[], i: number): T {
  const x = i < 0 ? xs[xs.length + i] : xs[i];
  assert.ok(x !== undefined, `no element ${i} in ${xs.length}`);
  return x;
}

export const inFlight = (at: number): MachineProgress => ({ phase: 'InFlight', startedAt: at });
export const startOf = (rollout: string, machine: string, at: number): StartRecord => ({
  machine,
  pool: 'workers',
  rollout,
  at,
});

/** A store backend the suite can run against; all stores opened share one backend. */
export interface OperatorStoreTarget {
  readonly name: string;
  start(): Promise<{
    /** A new store instance on the shared backend (another operator, or one restarted). */
    open(): OperatorStore;
    stop(): Promise<void>;
  }>;
}

/**
 * Start `target` before the suite and stop it after, closing every store still open: `open()` is
 * a new instance on the shared backend, `store()` the first one.
 */
export function useStores(target: OperatorStoreTarget): {
  open: () => OperatorStore;
  store: () => OperatorStore;
  /** Close `s` now (an operator that stops) rather than after the suite. */
  close: (s: OperatorStore) => Promise<void>;
} {
  let env: Awaited<ReturnType<OperatorStoreTarget['start']>> | undefined;
  let first: OperatorStore | undefined;
  const opened: OperatorStore[] = [];
  const open = (): OperatorStore => {
    assert.ok(env !== undefined, 'the store backend is not started yet');
    const s = env.open();
    opened.push(s);
    return s;
  };
  before(async () => {
    env = await target.start();
    first = open();
  });
  after(async () => {
    for (const s of opened) await s.close();
    await env?.stop();
  });
  return {
    open,
    close: async (s) => {
      opened.splice(opened.indexOf(s), 1);
      await s.close();
    },
    store: () => {
      assert.ok(first !== undefined, 'the store backend is not started yet');
      return first;
    },
  };
}
