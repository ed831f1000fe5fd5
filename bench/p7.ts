// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P7 (issue 4): a release pushed to the registry → the operator starting its first
 * machine, with the operator's default settings (`interval` and `discoverEvery` as
 * `protocol/operator-config.ts` defaults them, read from there, not copied). A lab fleet of 2
 * workers (`molt lab machine`, real agents over mTLS) in one pool following `beta`, no policies;
 * the operator in this process with the adapters `molt operator` ships: agent gateway, discovery
 * over the real docker-registry 2.8, state and leader election in a real etcd (one member).
 *
 * Per round: wait a random time in [0, discoverEvery) so pushes fall at every phase of the
 * operator's cycle, push release 1.<i>.0 to `beta`, note when the push completed; let the rollout
 * complete; then read from the store when discovery created the rollout (history
 * `rollout-created`), when the first start was recorded (the start record, written before the
 * agent is asked) and when an agent accepted it (history `machine-start`). The times come from the
 * operator's clock, which is this process's. Target: ≤ 5 s from push to the first start.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool, Rollout } from '../src/core/rollout/types.ts';
import { createAgentEventSource } from '../src/operator/adapters/agent-gateway/events.ts';
import { createAgentGateway } from '../src/operator/adapters/agent-gateway/index.ts';
import { createEtcdLeadership } from '../src/operator/adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from '../src/operator/adapters/etcd-store/operator-store.ts';
import { createReleaseSource, syncInventory } from '../src/operator/compose.ts';
import type { OperatorStore } from '../src/operator/ports/store.ts';
import { startWatchedLoop } from '../src/operator/runtime/watch.ts';
import { OperatorConfig } from '../src/protocol/operator-config.ts';
import { eventually } from '../src/testkit/process.ts';
import {
  official,
  repository,
  startLabFleet,
  type WorkerFleet,
} from '../test/integration/operator/lab-fleet.ts';

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
  fleet: WorkerFleet,
  pools: readonly Pool[],
): Promise<BenchOperator> {
  const defaults = operatorDefaults();
  const endpoints = fleet.storeEndpoints;
  const store = createEtcdOperatorStore({ endpoints });
  await syncInventory(store, fleet.machines);
  const read = (f: string): Promise<string> => readFile(join(fleet.pki.dir, f), 'utf8');
  const identity = {
    ca: await read('ca.pem'),
    cert: await read('operator.pem'),
    key: await read('operator.key'),
  };
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
      releases: () => {
        scans.push(Date.now());
        return source();
      },
      settings: {
        pools,
        fleetPolicies: [],
        imageFor: (digest) => `${registry}/${repository}@${digest}`,
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
  const rolloutTo = async (version: string, pool: string): Promise<Rollout | undefined> =>
    (await store.read()).rollouts.find(
      (r) => r.pool === pool && r.target.digest === fleet.digest(version),
    );
  return {
    store,
    scans,
    log,
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

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};
export const seconds = (ms: number): string => (ms / 1000).toFixed(2);

const rounds = 8;
const workers = 2;
const pool = 'workers';

interface Round {
  readonly version: string;
  readonly delayMs: number;
  /** push complete → rollout created (discovery). */
  readonly discoveredMs: number;
  /** push complete → first start record. */
  readonly startMs: number;
  /** push complete → first agent accepted the upgrade (history `machine-start`). */
  readonly acceptedMs: number;
  /** Discovery scans in the round, to show the scan period the loop actually gives. */
  readonly scanGapsMs: readonly number[];
}

async function round(
  fleet: WorkerFleet,
  op: BenchOperator,
  i: number,
  discoverEveryMs: number,
): Promise<Round> {
  const version = `1.${String(i)}.0`;
  const delayMs = Math.round(Math.random() * discoverEveryMs);
  await sleep(delayMs);
  await fleet.publish(version, { ...official, 'dev.molt.channels': 'beta' });
  const pushed = Date.now();
  const r = await op.completed(version, pool, 120_000);
  const stored = await op.store.read();
  const history = (await op.store.history()).filter((e) => e.rollout === r.id);
  const first = Math.min(...stored.starts.filter((s) => s.rollout === r.id).map((s) => s.at));
  const created = history.find((e) => e.kind === 'rollout-created')?.at ?? Number.NaN;
  const accepted = Math.min(...history.filter((e) => e.kind === 'machine-start').map((e) => e.at));
  const scans = op.scans.filter((t) => t >= pushed - 2 * discoverEveryMs && t <= first);
  return {
    version,
    delayMs,
    discoveredMs: created - pushed,
    startMs: first - pushed,
    acceptedMs: accepted - pushed,
    scanGapsMs: scans.slice(1).map((t, k) => t - (scans[k] ?? t)),
  };
}

/** Run P7 and print its table and `BENCH P7 …` line. */
export async function runP7(): Promise<void> {
  const defaults = operatorDefaults();
  const fleet = await startLabFleet({ workers, controlPlane: false });
  try {
    const op = await startBenchOperator(fleet, [{ name: pool, channel: 'beta', policies: [] }]);
    const results: Round[] = [];
    try {
      for (let i = 1; i <= rounds; i++)
        results.push(await round(fleet, op, i, defaults.discoverEveryMs));
    } finally {
      await op.stop();
    }
    const starts = results.map((r) => r.startMs);
    const gaps = results.flatMap((r) => r.scanGapsMs);
    const cell = (x: number | string, w: number): string => String(x).padStart(w);
    const lines = [
      `P7: ${String(workers)} worker lab machines in one pool (channel beta, no policies), real etcd store, docker-registry 2.8; operator defaults: interval ${String(defaults.intervalMs)} ms, discoverEvery ${String(defaults.discoverEveryMs)} ms`,
      `each round: random wait in [0, discoverEvery), push 1.<i>.0 to beta, times from push complete (s); rollout completes before the next round`,
      '',
      `${'release'.padEnd(8)}${cell('wait', 7)}${cell('discovered', 12)}${cell('start recorded', 16)}${cell('agent accepted', 16)}`,
      ...results.map(
        (r) =>
          `${r.version.padEnd(8)}${cell(seconds(r.delayMs), 7)}${cell(seconds(r.discoveredMs), 12)}${cell(seconds(r.startMs), 16)}${cell(seconds(r.acceptedMs), 16)}`,
      ),
      `${'median'.padEnd(15)}${cell(seconds(median(results.map((r) => r.discoveredMs))), 12)}${cell(seconds(median(starts)), 16)}${cell(seconds(median(results.map((r) => r.acceptedMs))), 16)}`,
      `${'max'.padEnd(15)}${cell(seconds(Math.max(...results.map((r) => r.discoveredMs))), 12)}${cell(seconds(Math.max(...starts)), 16)}${cell(seconds(Math.max(...results.map((r) => r.acceptedMs))), 16)}`,
      '',
      `discovery scans observed ${gaps.length > 0 ? `${seconds(Math.min(...gaps))}–${seconds(Math.max(...gaps))} s apart (median ${seconds(median(gaps))} s)` : 'once per round'}; a push waits for the next scan, so the worst case is about one scan period plus one pass`,
      `push → first start recorded: median ${seconds(median(starts))} s, max ${seconds(Math.max(...starts))} s (target ≤ 5 s)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `BENCH P7 first_start_s=${seconds(median(starts))} max_s=${seconds(Math.max(...starts))} rounds=${String(rounds)}\n`,
    );
  } finally {
    await fleet.stop();
  }
}
