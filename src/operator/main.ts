// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of `molt operator --config FILE` (docs/adr/0005 §4, STYLE §1): the only file
 * that chooses adapters. It loads the config and fleet file, opens the store and leader election
 * (etcd, or in memory for demos), syncs the fleet file's machines into the store, serves the
 * operator API when the config has `listen` (mTLS; prints `molt operator: serving https://…`), and
 * runs the reconcile loop until SIGINT/SIGTERM; then it stops serving, resigns leadership so a
 * standby takes over at once, and closes the store.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../core/errors.ts';
import {
  OperatorDashboardPrefix,
  OperatorFleetLockPrefix,
  OperatorServingPrefix,
} from '../protocol/operator.ts';
import { createAgentEventSource } from './adapters/agent-gateway/events.ts';
import { createAgentGateway } from './adapters/agent-gateway/index.ts';
import { EtcdFleetLockStore } from './adapters/etcd-fleetlock/store.ts';
import { createEtcdLeadership } from './adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from './adapters/etcd-store/operator-store.ts';
import { createHttpGateProbe } from './adapters/http-gate/index.ts';
import { createHttpProvider } from './adapters/http-provider/index.ts';
import { createReleaseSource, machineRecords, syncInventoryWhenReachable } from './compose.ts';
import { kubeParts, type KubeStatusRunner } from './compose-kube.ts';
import { loadOperatorConfig, type LoadedConfig } from './config.ts';
import { countingStore, OperatorMetrics } from './api/metrics.ts';
import { MemoryObservationBook, observingGateProbe, observingGateway } from './api/observations.ts';
import { createDashboardServer } from './api/dashboard-server.ts';
import { createFleetLockServer } from './api/fleetlock-server.ts';
import type { OperatorApiDeps } from './api/context.ts';
import { createOperatorApi, type OperatorApi } from './api/server.ts';
import { fleetLockGroups, readServerTls } from './api/wiring.ts';
import type { FleetLockStore } from './ports/fleetlock-store.ts';
import { MemoryFleetLockStore } from './adapters/memory-fleetlock/store.ts';
import type { Leadership } from './ports/leadership.ts';
import {
  createMemoryLeadership,
  MemoryLeadershipBackend,
} from './adapters/memory-leadership/leadership.ts';
import type { AgentGateway } from './ports/agents.ts';
import type { MachineProvider } from './ports/provider.ts';
import type { OperatorStore } from './ports/store.ts';
import { MemoryOperatorStore } from './adapters/memory-store/operator-store.ts';
import type { ReconcileDeps } from './loop/deps.ts';
import { startWatchedLoop } from './loop/watch.ts';

export interface OperatorIo {
  out(text: string): void;
  err(text: string): void;
}

const usage = 'usage: molt operator --config FILE';

function flags(argv: readonly string[]): { config: string } {
  let values: { config?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, (e as Error).message, { hint: usage });
  }
  if (values.config === undefined)
    throw new MoltError(ErrorCode.BadFlag, '--config is required', { hint: usage });
  return { config: values.config };
}

/**
 * `store: memory` keeps state in this process only (a demo or a test: a restart forgets the
 * rollouts); the in-memory store and election are the ones the conformance suites hold to the
 * etcd adapters' behaviour.
 */
function stateOf(
  c: LoadedConfig,
  id: string,
): { store: OperatorStore; leadership: Leadership; fleetLock: FleetLockStore } {
  const store = c.config.store;
  if (store === 'memory')
    return {
      store: new MemoryOperatorStore(),
      leadership: createMemoryLeadership(new MemoryLeadershipBackend(), id),
      fleetLock: new MemoryFleetLockStore(),
    };
  return {
    store: createEtcdOperatorStore({ endpoints: store.etcd }),
    fleetLock: new EtcdFleetLockStore({ endpoints: store.etcd }),
    leadership: createEtcdLeadership({
      endpoints: store.etcd,
      id,
      ttlSeconds: Math.max(1, Math.round(c.config.leaderTtl / 1000)),
    }),
  };
}

/** One HTTP machine provider per pool that configures one (replace strategy and its fallback). */
function providersOf(c: LoadedConfig): (pool: string) => MachineProvider | undefined {
  const byPool = new Map<string, MachineProvider>();
  for (const pool of c.fleet.pools)
    if (pool.provider !== undefined) byPool.set(pool.name, createHttpProvider(pool.provider));
  return (pool) => byPool.get(pool);
}

async function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        resolve(signal);
      });
  });
}

interface ApiParts {
  readonly store: OperatorStore;
  readonly leadership: Leadership;
  readonly fleetLock: FleetLockStore;
  readonly observations: MemoryObservationBook;
  readonly metrics: OperatorMetrics;
  readonly log: (line: string) => void;
}

/** How a listener reports a 500 (a bug in molt): one log line with the stack. */
const reportBug =
  (log: (line: string) => void, listener: string) =>
  (e: unknown): void => {
    log(`${listener} error (a bug): ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  };

/** The FleetLock listener without client certificates, when the config has `fleetLock`. */
async function serveFleetLock(
  c: LoadedConfig,
  path: string,
  p: ApiParts,
  io: OperatorIo,
): Promise<OperatorApi | undefined> {
  const f = c.config.fleetLock;
  if (f === undefined) return undefined;
  const server = await createFleetLockServer({
    deps: {
      fleetLock: { store: p.fleetLock, groups: fleetLockGroups(c.fleet) },
      now: () => Date.now(),
      onInternalError: reportBug(p.log, 'FleetLock'),
    },
    tls: f.tls ? await readServerTls(path, c.config) : undefined,
    host: f.listen.host,
    port: f.listen.port,
  });
  io.out(`${OperatorFleetLockPrefix}${server.url}\n`);
  return server;
}

/** The operator API (docs/adr/0005 §5) when the config has `listen`; prints where it serves. */
function apiDeps(c: LoadedConfig, p: ApiParts): OperatorApiDeps {
  return {
    store: p.store,
    observations: p.observations,
    fleet: c.fleet,
    metrics: p.metrics,
    isLeader: () => p.leadership.isLeader(),
    fleetLock: { store: p.fleetLock, groups: fleetLockGroups(c.fleet) },
    now: () => Date.now(),
    onInternalError: reportBug(p.log, 'API'),
  };
}

async function serveDashboard(
  c: LoadedConfig,
  path: string,
  p: ApiParts,
  io: OperatorIo,
): Promise<OperatorApi | undefined> {
  const d = c.config.dashboard;
  if (d === undefined) return undefined;
  const server = await createDashboardServer({
    deps: { ...apiDeps(c, p), onInternalError: reportBug(p.log, 'dashboard') },
    tls: d.tls ? await readServerTls(path, c.config) : undefined,
    host: d.listen.host,
    port: d.listen.port,
  });
  io.out(`${OperatorDashboardPrefix}${server.url}\n`);
  return server;
}

async function serveApi(
  c: LoadedConfig,
  path: string,
  p: ApiParts,
  io: OperatorIo,
): Promise<OperatorApi | undefined> {
  const listen = c.config.listen;
  if (listen === undefined) return undefined;
  const api = await createOperatorApi({
    deps: apiDeps(c, p),
    tls: { ca: c.pki.ca, ...(await readServerTls(path, c.config)) },
    host: listen.host,
    port: listen.port,
  });
  io.out(`${OperatorServingPrefix}${api.url}\n`);
  return api;
}

interface LoopParts {
  readonly store: OperatorStore;
  readonly agents: AgentGateway;
  readonly observations: MemoryObservationBook;
  readonly log: (line: string) => void;
  /** The Kubernetes status mirror, refreshed after each of the leader's passes. */
  readonly status?: KubeStatusRunner | undefined;
}

/** The reconcile loop's dependencies: the real adapters the config names. */
function reconcileDeps(c: LoadedConfig, p: LoopParts): Omit<ReconcileDeps, 'watch'> {
  const { store, agents, log } = p;
  return {
    store,
    agents,
    gates: observingGateProbe(createHttpGateProbe(), p.observations),
    providers: providersOf(c),
    releases: createReleaseSource({
      registry: c.config.registry,
      repository: c.config.repository,
      insecure: c.config.insecure,
      ...(c.publicKeyPem !== undefined && { publicKeyPem: c.publicKeyPem }),
    }),
    settings: {
      pools: c.fleet.pools,
      fleetPolicies: c.fleet.fleetPolicies,
      imageFor: (digest) => `${c.config.registry}/${c.config.repository}@${digest}`,
      unreachableFailMs: c.config.unreachableFail,
      discoverEveryMs: c.config.discoverEvery,
      gateGraceMs: c.config.gateGrace,
      ...(c.publicKeyPem !== undefined && { requireSignature: true }),
    },
    now: () => Date.now(),
    log,
  };
}

/** The reconcile loop, woken by the agents' event streams; `stop` ends the loop, then the streams. */
function startLoop(
  c: LoadedConfig,
  p: LoopParts,
  leadership: Leadership,
  metrics: OperatorMetrics,
): { stop(): Promise<void> } {
  const events = createAgentEventSource(c.pki);
  const loop = startWatchedLoop(reconcileDeps(c, p), events, leadership, {
    intervalMs: c.config.interval,
    onPass: (pass) => {
      metrics.recordPass(pass);
      p.status?.kick();
    },
  });
  return {
    async stop() {
      await loop.stop();
      await p.status?.stop();
      await events.close();
    },
  };
}

/** Sync the fleet file into the store, then start the API and FleetLock listener the config asks for (on failure, any started is closed). */
async function serveAll(
  c: LoadedConfig,
  path: string,
  parts: ApiParts,
  io: OperatorIo,
): Promise<OperatorApi[]> {
  const servers: OperatorApi[] = [];
  try {
    await syncInventoryWhenReachable(parts.store, machineRecords(c.fleet, c.fleetFile), parts.log);
    for (const serve of [serveApi, serveFleetLock, serveDashboard]) {
      const server = await serve(c, path, parts, io);
      if (server !== undefined) servers.push(server);
    }
    return servers;
  } catch (e) {
    await Promise.all(servers.map((s) => s.close()));
    throw e;
  }
}

/** Run `molt operator`; resolves with the exit code after a signal. */
export async function runOperatorCommand(argv: readonly string[], io: OperatorIo): Promise<number> {
  const { config: path } = flags(argv);
  const c = await loadOperatorConfig(path);
  const id = c.config.id ?? `${hostname()}-${String(process.pid)}`;
  const log = (line: string): void => {
    io.out(`${new Date().toISOString()} ${line}\n`);
  };
  const state = stateOf(c, id);
  const kube = await kubeParts(c, path, id, log).catch(async (e: unknown) => {
    await Promise.all([state.store.close(), state.leadership.close(), state.fleetLock.close()]);
    throw e;
  });
  const { fleetLock } = state;
  const leadership = kube.leadership ?? state.leadership;
  // The API's metrics count what the loop does, and it reads what the loop last saw of each
  // machine, through these two wrappers: the loop itself knows nothing about the API.
  const metrics = new OperatorMetrics();
  const observations = new MemoryObservationBook();
  const store = countingStore(state.store, metrics);
  const agents = observingGateway(createAgentGateway(c.pki), observations, () => Date.now());
  const closeAll = async (): Promise<void> => {
    await Promise.all([
      agents.close(),
      store.close(),
      state.leadership.close(),
      leadership.close(),
      fleetLock.close(),
    ]);
  };
  const parts = { store, leadership, fleetLock, observations, metrics, log };
  const servers = await serveAll(c, path, parts, io).catch(async (e: unknown) => {
    await closeAll();
    throw e;
  });
  const status = kube.status?.(store, observations);
  const running = startLoop(c, { store, agents, observations, log, status }, leadership, metrics);
  log(
    `molt operator ${id}: ${String(c.fleet.machines.length)} machines, ${String(c.fleet.pools.length)} pools`,
  );
  const signal = await untilSignal();
  log(`${signal}: stopping`);
  await Promise.all(servers.map((s) => s.close()));
  await running.stop();
  await closeAll();
  return 0;
}
