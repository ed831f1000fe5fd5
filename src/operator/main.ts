// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of `molt operator --config FILE` (docs/adr/0005 §4, STYLE §1): with the files
 * it splits into (`compose.ts`, `compose-kube.ts`, `listeners.ts`), the only place that chooses
 * and constructs adapters. It loads the config and fleet file, opens the store, leader election
 * and FleetLock semaphores, syncs the fleet file's machines into the store, starts the listeners
 * the config asks for (`listeners.ts`), and runs the reconcile loop until SIGINT/SIGTERM; then it
 * stops serving, resigns leadership so a standby takes over at once, and closes the store.
 *
 * `store: etcd` is the production store: state outlives the process and operators on other
 * machines share it. `store: memory` (a demo, a test) keeps everything in this one process, on
 * the memory adapters that pass the etcd adapters' conformance suites: a restart forgets every
 * rollout, start, hold, FleetLock slot and history event, and no other process can share the
 * state or stand by for the leadership.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { createAgentEventSource } from './adapters/agent-gateway/events.ts';
import { createAgentGateway } from './adapters/agent-gateway/index.ts';
import { EtcdFleetLockStore } from './adapters/etcd-fleetlock/store.ts';
import { createEtcdLeadership } from './adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from './adapters/etcd-store/operator-store.ts';
import { createHttpGateProbe } from './adapters/http-gate/index.ts';
import { MemoryFleetLockStore } from './adapters/memory-fleetlock/store.ts';
import {
  createMemoryLeadership,
  MemoryLeadershipBackend,
} from './adapters/memory-leadership/leadership.ts';
import { MemoryOperatorStore } from './adapters/memory-store/operator-store.ts';
import { countingStore, OperatorMetrics } from './api/metrics.ts';
import { MemoryObservationBook, observingGateProbe, observingGateway } from './api/observations.ts';
import { createReleaseSource, providersOf } from './compose.ts';
import { declaredRunner, withLivePools } from './compose-declared.ts';
import type { DeclaredRunner } from './loop/declared.ts';
import { kubeParts, type KubeParts, type KubeStatusRunner } from './compose-kube.ts';
import { kubernetesPlans } from './compose-kubernetes.ts';
import { startConfiguredNotifications } from './compose-notify.ts';
import { loadOperatorConfig, type LoadedConfig } from './config.ts';
import { serveAll } from './listeners.ts';
import type { Release } from '../core/releases/release.ts';
import type { ReconcileDeps } from './loop/deps.ts';
import { startWatchedLoop } from './loop/watch.ts';
import type { AgentGateway } from './ports/agents.ts';
import type { FleetLockStore } from './ports/fleetlock-store.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';

export interface OperatorIo {
  out(text: string): void;
  err(text: string): void;
}

const usage = `Usage: molt operator --config FILE

The fleet operator (docs/adr/0005): keeps every pool of the fleet on its channel's release under its
policies, calling each machine's agent over mutual TLS. FILE (YAML) names the fleet file, the store
(etcd, or memory for a demo), the PKI and what it serves (\`listen\`: the API molt rollout|machine
talk to, the dashboard, FleetLock, metrics). Runs until SIGINT/SIGTERM.

Options:
  --config FILE   the operator config (YAML)
`;

/** The config file `argv` names; undefined when it asks for the usage. */
function flags(argv: readonly string[]): { config: string } | undefined {
  let values: { config?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, (e as Error).message, { hint: 'molt operator --help' });
  }
  if (values.help === true) return undefined;
  if (values.config === undefined)
    throw new MoltError(ErrorCode.BadFlag, '--config is required', {
      hint: 'usage: molt operator --config FILE (molt operator --help)',
    });
  return { config: values.config };
}

/**
 * The store, leader election and FleetLock semaphores the config's `store` names: etcd, or memory
 * (this process only: a restart forgets them; see the file's comment).
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

async function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        resolve(signal);
      });
  });
}

interface LoopParts {
  readonly store: OperatorStore;
  readonly agents: AgentGateway;
  readonly observations: MemoryObservationBook;
  readonly log: (line: string) => void;
  /** The Kubernetes status mirror, refreshed after each of the leader's passes. */
  readonly status?: KubeStatusRunner | undefined;
  /** The cluster's Kubernetes version, when the fleet is a Kubernetes cluster. */
  readonly kubernetesVersion?: (() => Promise<string>) | undefined;
  /** Discovery over the registry (one cache, shared with the API). */
  readonly releases: () => Promise<readonly Release[]>;
  /** The declared molt.dev objects, brought in at the start of each pass. */
  readonly declared?: DeclaredRunner | undefined;
  /** The Kubernetes plans (docs/adr/0012), driven by each pass. */
  readonly kubernetes?: ReconcileDeps['kubernetes'];
}

/** The reconcile loop's dependencies: the real adapters the config names. */
function reconcileDeps(c: LoadedConfig, p: LoopParts): Omit<ReconcileDeps, 'watch'> {
  const { store, agents, log } = p;
  return {
    store,
    agents,
    gates: observingGateProbe(createHttpGateProbe(), p.observations),
    providers: providersOf(c),
    releases: p.releases,
    settings: {
      // Read at each use: declared pools change from pass to pass (compose-declared.ts).
      get pools() {
        return c.fleet.pools;
      },
      fleetPolicies: c.fleet.fleetPolicies,
      ...(c.fleet.clusters !== undefined && { clusters: c.fleet.clusters }),
      imageFor: (digest) => `${c.config.registry}/${c.config.repository}@${digest}`,
      unreachableFailMs: c.config.unreachableFail,
      discoverEveryMs: c.config.discoverEvery,
      resyncMs: c.config.resync,
      gateGraceMs: c.config.gateGrace,
      ...(c.publicKeyPem !== undefined && { requireSignature: true }),
    },
    now: () => Date.now(),
    log,
    ...(p.declared !== undefined && { declared: p.declared }),
    ...(p.kubernetesVersion !== undefined && { kubernetesVersion: p.kubernetesVersion }),
    ...(p.kubernetes !== undefined && { kubernetes: p.kubernetes }),
  };
}

/**
 * The reconcile loop, woken by the agents' event streams, and the webhook notifications of what
 * it records (`compose-notify.ts`); `stop` ends the loop, then the notifications and the streams.
 */
function startLoop(
  c: LoadedConfig,
  p: LoopParts,
  leadership: Leadership,
  metrics: OperatorMetrics,
): { stop(): Promise<void> } {
  const events = createAgentEventSource(c.pki);
  const notify = startConfiguredNotifications(c, {
    store: p.store,
    leadership,
    metrics,
    log: p.log,
  });
  const loop = startWatchedLoop(reconcileDeps(c, p), events, leadership, {
    intervalMs: c.config.interval,
    onPass: (pass) => {
      metrics.recordPass(pass);
      p.status?.kick();
      notify?.kick();
    },
  });
  return {
    async stop() {
      await loop.stop();
      await notify?.stop();
      await p.status?.stop();
      await events.close();
    },
  };
}

/** Discovery over the registry the config names: one cache, shared by the loop and the API. */
const releaseSourceOf = (c: LoadedConfig): (() => Promise<readonly Release[]>) =>
  createReleaseSource({
    registry: c.config.registry,
    repository: c.config.repository,
    insecure: c.config.insecure,
    ...(c.publicKeyPem !== undefined && { publicKeyPem: c.publicKeyPem }),
  });

const kubeVersion = (k: KubeParts): Pick<LoopParts, 'kubernetesVersion'> =>
  k.kubernetesVersion === undefined ? {} : { kubernetesVersion: k.kubernetesVersion };

/** Run `molt operator` (or print its usage); resolves with the exit code after a signal. */
export async function runOperatorCommand(argv: readonly string[], io: OperatorIo): Promise<number> {
  const asked = flags(argv);
  if (asked !== undefined) return runOperator(asked.config, io);
  io.out(usage);
  return 0;
}

async function runOperator(path: string, io: OperatorIo): Promise<number> {
  const {
    config: c,
    setPools,
    filePools,
    fileMachines,
    kubernetes: live,
  } = withLivePools(await loadOperatorConfig(path));
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
  const metrics = new OperatorMetrics(c.config.notifications.map((n) => n.name));
  const observations = new MemoryObservationBook();
  const store = countingStore(state.store, metrics);
  const gateway = createAgentGateway(c.pki);
  const agents = observingGateway(gateway, observations, () => Date.now());
  const plans = kubernetesPlans(c, {
    ...{ store, leadership, gateway, releases: releaseSourceOf(c), log },
    ...{ health: kube.controlPlaneHealth, declared: live.declared },
  });
  const closeAll = async (): Promise<void> => {
    await Promise.all([
      plans.close(),
      agents.close(),
      store.close(),
      state.leadership.close(),
      leadership.close(),
      fleetLock.close(),
    ]);
  };
  const parts = {
    ...{ store, leadership, fleetLock, observations, metrics, log, probe: gateway },
    ...{ releases: plans.api.plans.releases, kubernetes: plans.api },
  };
  const servers = await serveAll(c, path, parts, io).catch(async (e: unknown) => {
    await closeAll();
    throw e;
  });
  const status = kube.status?.(store, observations);
  const running = startLoop(
    c,
    {
      ...{ store, agents, observations, log, status },
      declared:
        kube.declared &&
        declaredRunner({
          ...{ source: kube.declared, filePools, fileMachines, setPools, store, log },
          ...{ fileKubernetes: live.fileKubernetes, setKubernetes: live.setKubernetes },
        }),
      ...{ releases: parts.releases, ...kubeVersion(kube), kubernetes: plans.driver },
    },
    leadership,
    metrics,
  );
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
