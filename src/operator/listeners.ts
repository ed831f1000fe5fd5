// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's listeners, part of its composition root (docs/adr/0005 §5): the operator API
 * (mutual TLS) when the config has `listen`, the FleetLock endpoint when it has `fleetLock.listen`,
 * the dashboard when it has `dashboard`, the probes when it has `health`, the Cluster API extension
 * when it has `capi`. Each prints where it serves; a 500 (a bug in molt) is one log line with its
 * stack.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  OperatorCapiPrefix,
  OperatorDashboardPrefix,
  OperatorFleetLockPrefix,
  OperatorHealthPrefix,
  OperatorServingPrefix,
} from '../protocol/operator.ts';
import { machineRecords, syncInventoryWhenReachable } from './compose.ts';
import type { LoadedConfig } from './config.ts';
import type { OperatorApiDeps } from './api/context.ts';
import type { KubernetesApi } from './kubernetes/deps.ts';
import type { ImagesDeps } from './images/observe.ts';
import { createAgentJournal } from './adapters/agent-gateway/journal.ts';
import { createDashboardServer } from './api/dashboard-server.ts';
import { createFleetLockServer } from './api/fleetlock-server.ts';
import { createHealthServer } from './api/health-server.ts';
import type { OperatorMetrics } from './api/metrics.ts';
import type { MemoryObservationBook } from './api/observations.ts';
import { createOperatorApi, type OperatorApi } from './api/server.ts';
import { moltUpdates } from './capi/molt-updates.ts';
import { createCapiExtensionServer } from './capi/server.ts';
import { machineStatus, type MachineStatus } from './capi/machine-status.ts';
import { createKubeCapiMachines } from './adapters/capi-machines/index.ts';
import { loadKubeConfig } from '../platform/kube/client.ts';
import { fleetLockGroups, readServerTls, ssoSettings } from './api/wiring.ts';
import type { AgentGateway } from './ports/agents.ts';
import type { FleetLockStore } from './ports/fleetlock-store.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';
import type { CapiMachines } from './ports/capi-machines.ts';
import type { Release } from '../core/releases/release.ts';

/** Where a listener prints the address it serves at (`molt operator`'s standard output). */
export interface ServingIo {
  out(text: string): void;
}

/** What the listeners serve: the state, what the loop saw and counted, and the log. */
export interface ApiParts {
  readonly store: OperatorStore;
  readonly leadership: Leadership;
  readonly fleetLock: FleetLockStore;
  readonly observations: MemoryObservationBook;
  readonly metrics: OperatorMetrics;
  readonly log: (line: string) => void;
  /**
   * The agent gateway: checks a self-registering node's agent presents its certificate, and
   * pushes holds made through the API to the machines' agents.
   */
  readonly probe: AgentGateway;
  /** The registry's releases (what `molt releases block` may name). */
  readonly releases: () => Promise<readonly Release[]>;
  /** The Kubernetes plans' routes (docs/adr/0012). */
  readonly kubernetes?: KubernetesApi | undefined;
  /** What image policies follow (docs/adr/0013): `GET /v1/images`. */
  readonly images?: ImagesDeps | undefined;
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
  io: ServingIo,
): Promise<OperatorApi | undefined> {
  const f = c.config.fleetLock;
  if (f?.listen === undefined) return undefined;
  const server = await createFleetLockServer({
    deps: {
      fleetLock: fleetLockDeps(c, p),
      now: () => Date.now(),
      onInternalError: reportBug(p.log, 'FleetLock'),
    },
    clients: f.clients ?? [],
    tls: f.tls ? await readServerTls(path, c.config) : undefined,
    host: f.listen.host,
    port: f.listen.port,
  });
  io.out(`${OperatorFleetLockPrefix}${server.url}\n`);
  return server;
}

/** The FleetLock semaphores, groups and TTLs both FleetLock listeners serve. */
function fleetLockDeps(c: LoadedConfig, p: ApiParts): OperatorApiDeps['fleetLock'] {
  return {
    store: p.fleetLock,
    groups: fleetLockGroups(c.fleet, c.config.fleetLock),
    onRecovered: (group, ids) => {
      p.log(`FleetLock: freed the expired slot of ${ids.join(', ')} in group ${group}`);
    },
  };
}

/** The operator API (docs/adr/0005 §5) when the config has `listen`; prints where it serves. */
function apiDeps(c: LoadedConfig, p: ApiParts): OperatorApiDeps {
  return {
    store: p.store,
    observations: p.observations,
    fleet: c.fleet,
    metrics: p.metrics,
    isLeader: () => p.leadership.isLeader(),
    fleetLock: fleetLockDeps(c, p),
    agents: p.probe,
    selfRegistration: {
      rules: c.config.selfRegistration,
      probe: (machine) => p.probe.status(machine),
    },
    releases: p.releases,
    ...(p.kubernetes !== undefined && { kubernetes: p.kubernetes }),
    ...(p.images !== undefined && { images: p.images }),
    now: () => Date.now(),
    onInternalError: reportBug(p.log, 'API'),
  };
}

async function serveDashboard(
  c: LoadedConfig,
  path: string,
  p: ApiParts,
  io: ServingIo,
): Promise<OperatorApi | undefined> {
  const d = c.config.dashboard;
  if (d === undefined) return undefined;
  // Its own connections to the agents (closed with the listener), with the loop's identity check.
  const journal = createAgentJournal({ ...c.pki, now: () => Date.now() });
  const server = await createDashboardServer({
    deps: { ...apiDeps(c, p), journal, onInternalError: reportBug(p.log, 'dashboard') },
    access: {
      users: d.users,
      anonymousRead: d.anonymousRead,
      sessionTtl: d.sessionTtl,
      sso: d.oidc && (await ssoSettings(path, d.oidc)),
    },
    tls: d.tls ? await readServerTls(path, c.config) : undefined,
    host: d.listen.host,
    port: d.listen.port,
  });
  io.out(`${OperatorDashboardPrefix}${server.url}\n`);
  return {
    url: server.url,
    close: async () => {
      await server.close();
      await journal.close();
    },
  };
}

/** The probe listener when the config has `health`; prints where it serves. */
async function serveHealth(
  c: LoadedConfig,
  p: ApiParts,
  io: ServingIo,
): Promise<OperatorApi | undefined> {
  const h = c.config.health;
  if (h === undefined) return undefined;
  const server = await createHealthServer({
    deps: { storeAnswers: () => p.store.historyHead(), isLeader: () => p.leadership.isLeader() },
    host: h.listen.host,
    port: h.listen.port,
    onInternalError: reportBug(p.log, 'probe listener'),
  });
  io.out(`${OperatorHealthPrefix}${server.url}\n`);
  return server;
}

/** The Machines' conditions and remediation (docs/adr/0014 decision 5). */
export function capiMachineStatus(
  k: NonNullable<LoadedConfig['config']['capi']>,
  machines: CapiMachines,
  log: (line: string) => void,
): MachineStatus {
  return machineStatus({ machines, onFailure: k.onFailure, now: () => Date.now(), log });
}

/** The management cluster's Machines when the config has `capi` (its `kubeconfig`; docs/adr/0014). */
export async function capiMachinesOf(
  c: LoadedConfig,
  path: string,
): Promise<CapiMachines | undefined> {
  const file = c.config.capi?.kubeconfig;
  if (file === undefined) return undefined;
  return createKubeCapiMachines({ kc: await loadKubeConfig(resolve(dirname(path), file)) });
}

/** The Cluster API extension (docs/adr/0014) when the config has `capi`; prints where it serves. */
async function serveCapi(
  c: LoadedConfig,
  path: string,
  p: ApiParts,
  io: ServingIo,
): Promise<OperatorApi | undefined> {
  const k = c.config.capi;
  const machines = await capiMachinesOf(c, path);
  if (k === undefined || machines === undefined) return undefined;
  const updates = moltUpdates({
    store: p.store,
    releases: p.releases,
    pools: () => c.fleet.pools,
    clusters: k.clusters,
    machines,
    observed: (m) => p.observations.get(m),
    // The release a Machine moves to passes discovery's checks, signatures included.
    ...(c.publicKeyPem !== undefined && { requireSignature: true }),
    now: () => Date.now(),
    log: p.log,
  });
  const clientCa =
    k.clientCa === undefined
      ? undefined
      : await readFile(resolve(dirname(path), k.clientCa), 'utf8');
  if (clientCa === undefined && k.insecureNoClientAuth)
    p.log(
      'WARNING: Cluster API extension: capi.insecureNoClientAuth: anyone who reaches it may call its hooks (no client certificate is asked for)',
    );
  const server = await createCapiExtensionServer({
    deps: {
      updates,
      releaseForVersion: (v, ref) => updates.releaseFor(v, ref),
      status: capiMachineStatus(k, machines, p.log),
    },
    tls: { ...(await readServerTls(path, c.config)), clientCa },
    insecureNoClientAuth: k.insecureNoClientAuth,
    clientNames: k.clientNames,
    host: k.listen.host,
    port: k.listen.port,
    onInternalError: reportBug(p.log, 'Cluster API extension'),
  });
  io.out(`${OperatorCapiPrefix}${server.url}\n`);
  return server;
}

async function serveApi(
  c: LoadedConfig,
  path: string,
  p: ApiParts,
  io: ServingIo,
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

/**
 * Start the probe listener, sync the fleet file into the store, then start the API, FleetLock,
 * dashboard and Cluster API listeners the config asks for (on failure, any started is closed).
 */
export async function serveAll(
  c: LoadedConfig,
  path: string,
  parts: ApiParts,
  io: ServingIo,
): Promise<OperatorApi[]> {
  const servers: OperatorApi[] = [];
  try {
    // The probes first: while the store is still out of reach the process is alive (not ready),
    // and a kubelet must not restart it for that.
    const health = await serveHealth(c, parts, io);
    if (health !== undefined) servers.push(health);
    await syncInventoryWhenReachable(parts.store, machineRecords(c.fleet, c.fleetFile), parts.log);
    for (const serve of [serveApi, serveFleetLock, serveDashboard, serveCapi]) {
      const server = await serve(c, path, parts, io);
      if (server !== undefined) servers.push(server);
    }
    return servers;
  } catch (e) {
    await Promise.all(servers.map((s) => s.close()));
    throw e;
  }
}
