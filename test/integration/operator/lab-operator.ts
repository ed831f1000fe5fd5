// SPDX-License-Identifier: Apache-2.0
// The operator in the test's own process over a lab fleet, wired as `src/operator/main.ts` wires it
// (agent gateway and event streams, discovery over the fleet's registry, etcd store and leader
// election, the config's defaults), for the benchmarks P3 and P7 and the replace test.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pool, Rollout } from '../../../src/core/rollout/types.ts';
import { createAgentEventSource } from '../../../src/operator/adapters/agent-gateway/events.ts';
import { createAgentGateway } from '../../../src/operator/adapters/agent-gateway/index.ts';
import { createEtcdLeadership } from '../../../src/operator/adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from '../../../src/operator/adapters/etcd-store/operator-store.ts';
import { createHttpProvider } from '../../../src/operator/adapters/http-provider/index.ts';
import { createReleaseSource, syncInventory } from '../../../src/operator/compose.ts';
import type { MachineProvider } from '../../../src/operator/ports/provider.ts';
import type { OperatorStore } from '../../../src/operator/ports/store.ts';
import { startWatchedLoop } from '../../../src/operator/loop/watch.ts';
import { OperatorConfig } from '../../../src/protocol/operator-config.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { afterPasses } from '../../../src/testkit/reconcile-passes.ts';
import { repository, type LabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';

/** The operator's mTLS identity toward the fleet's agents (the fleet CA, its certificate and key). */
export async function operatorIdentity(
  fleet: Pick<LabFleet, 'pki'>,
): Promise<{ ca: string; cert: string; key: string }> {
  const read = (f: string): Promise<string> => readFile(join(fleet.pki.dir, f), 'utf8');
  return {
    ca: await read('ca.pem'),
    cert: await read('operator.pem'),
    key: await read('operator.key'),
  };
}

/** The operator's defaults, as `molt operator` parses a config that sets none of them. */
export function operatorDefaults(): {
  readonly intervalMs: number;
  readonly discoverEveryMs: number;
  readonly unreachableFailMs: number;
  readonly leaderTtlMs: number;
} {
  const c = OperatorConfig.parse({
    registry: 'r',
    repository: 'r',
    fleet: 'f',
    pki: { ca: 'c', cert: 'c', key: 'k' },
    store: 'memory',
  });
  return {
    intervalMs: c.interval,
    discoverEveryMs: c.discoverEvery,
    unreachableFailMs: c.unreachableFail,
    leaderTtlMs: c.leaderTtl,
  };
}

export interface BenchOperator {
  readonly store: OperatorStore;
  /** Epoch ms of every discovery scan (each call of the release source). */
  readonly scans: readonly number[];
  readonly log: readonly string[];
  /**
   * Resolves once a discovery scan that began after the call has finished its pass: what that
   * scan could create, it has (discovery and its rollouts are one pass).
   */
  scanned(): Promise<void>;
  /** The rollout of `pool` to `version`, once discovery created it. */
  rolloutTo(version: string, pool: string): Promise<Rollout | undefined>;
  /** Wait until that rollout is Completed (throws with the log's tail if it halts or times out). */
  completed(version: string, pool: string, timeoutMs: number): Promise<Rollout>;
  stop(): Promise<void>;
}

/**
 * The operator loop in this process over `fleet`, wired as `src/operator/main.ts` wires it (real
 * adapters, etcd store and leader election, the defaults of the config), leading before it returns.
 */
export async function startBenchOperator(
  fleet: WorkerFleet | LabFleet,
  pools: readonly Pool[],
  o: {
    /** The registry host agents pull from (a proxy in front of the fleet's). @default the fleet's */
    readonly pullFrom?: string;
  } = {},
): Promise<BenchOperator> {
  const providers = new Map<string, MachineProvider>();
  for (const p of pools)
    if (p.provider !== undefined && 'url' in p.provider)
      providers.set(p.name, createHttpProvider(p.provider));
  const defaults = operatorDefaults();
  const endpoints = fleet.storeEndpoints;
  const store = createEtcdOperatorStore({ endpoints });
  await syncInventory(store, fleet.machines);
  const identity = await operatorIdentity(fleet);
  const agents = createAgentGateway(identity);
  const events = createAgentEventSource(identity);
  const leadership = createEtcdLeadership({
    endpoints,
    id: 'bench-operator',
    ttlSeconds: Math.max(1, Math.round(defaults.leaderTtlMs / 1000)),
  });
  const registry = fleet.registry.host;
  const source = createReleaseSource({ registry, repository, insecure: true });
  const scans: number[] = [];
  const log: string[] = [];
  const loop = startWatchedLoop(
    {
      store,
      agents,
      providers: (pool) => providers.get(pool),
      releases: () => {
        scans.push(Date.now());
        return source();
      },
      settings: {
        pools,
        fleetPolicies: [],
        imageFor: (digest) => `${o.pullFrom ?? registry}/${repository}@${digest}`,
        unreachableFailMs: defaults.unreachableFailMs,
        discoverEveryMs: defaults.discoverEveryMs,
      },
      now: () => Date.now(),
      log: (line) => log.push(`${new Date().toISOString()} ${line}`),
    },
    events,
    leadership,
    { intervalMs: defaults.intervalMs },
  );
  await loop.nextPass();
  const scanned = async (): Promise<void> => {
    const before = scans.length;
    await eventually(
      () => {
        if (scans.length <= before) throw new Error('no discovery scan yet');
        return Promise.resolve();
      },
      { timeoutMs: 4 * defaults.discoverEveryMs, intervalMs: 50 },
    );
    await afterPasses(loop, 1);
  };
  const rolloutTo = async (version: string, pool: string): Promise<Rollout | undefined> =>
    (await store.read()).rollouts.find(
      (r) => r.pool === pool && r.target.digest === fleet.digest(version),
    );
  return {
    store,
    scans,
    log,
    scanned,
    rolloutTo,
    completed: (version, pool, timeoutMs) =>
      eventually(
        async () => {
          const r = await rolloutTo(version, pool);
          if (r?.state === 'Halted')
            throw new Error(`rollout ${r.id} halted:\n${log.slice(-10).join('\n')}`);
          if (r?.state !== 'Completed')
            throw new Error(`${pool} to ${version}: ${r?.state ?? 'no rollout yet'}`);
          return r;
        },
        { timeoutMs, intervalMs: 250 },
      ).catch((e: unknown) => {
        throw new Error(`${(e as Error).message}\n${log.slice(-10).join('\n')}`, { cause: e });
      }),
    async stop() {
      await loop.stop();
      await Promise.all([agents.close(), events.close(), store.close(), leadership.close()]);
    },
  };
}
