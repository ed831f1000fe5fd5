// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of `molt operator --config FILE` (docs/adr/0005 §4, STYLE §1): with the files
 * it splits into (`compose.ts`, `compose-loop.ts`, `compose-kube.ts`, `listeners.ts`), the only place that chooses
 * and constructs adapters. It loads the config and fleet file, opens the store, leader election
 * and FleetLock semaphores, syncs the fleet file's machines into the store, starts the listeners
 * the config asks for (`listeners.ts`), and runs the reconcile loop until SIGINT/SIGTERM; then it
 * stops serving, resigns leadership so a standby takes over at once, and closes the store.
 *
 * `store: etcd` is the production store: state outlives the process and operators on other
 * machines share it; `store: kubernetes` keeps the same state in OperatorRecords through the API
 * server of the cluster the operator runs in (docs/adr/0016, `compose-store.ts`). `store: memory` (a demo, a test) keeps everything in this one process, on
 * the memory adapters that pass the etcd adapters' conformance suites: a restart forgets every
 * rollout, start, hold, FleetLock slot and history event, and no other process can share the
 * state or stand by for the leadership.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { optionLines, parseOptions } from '../protocol/flags.ts';
import { OperatorFlags } from '../protocol/process-flags/daemons.ts';
import { createAgentGateway } from './adapters/agent-gateway/index.ts';
import { countingStore, OperatorMetrics } from './api/metrics.ts';
import { MemoryObservationBook, observingGateway } from './api/observations.ts';
import { createReleaseSource } from './compose.ts';
import { declaredRunner, withLivePools } from './compose-declared.ts';
import { imageDriver } from './compose-images.ts';
import { imagesDepsWithGm } from './compose-gm.ts';
import { startLoop, type LoopParts } from './compose-loop.ts';
import { stateOf } from './compose-store.ts';
import { kubeParts, type KubeParts } from './compose-kube.ts';
import { kubernetesPlans } from './compose-kubernetes.ts';
import { loadOperatorConfig, type LoadedConfig } from './config.ts';
import { capiMachinesOf, serveAll } from './listeners.ts';
import type { Release } from '../core/releases/release.ts';

export interface OperatorIo {
  out(text: string): void;
  err(text: string): void;
}

const usage = `Usage: molt operator --config FILE

The fleet operator (docs/adr/0005): keeps every pool of the fleet on its channel's release under its
policies, calling each machine's agent over mutual TLS. FILE (YAML) names the fleet file, the store
(etcd, kubernetes, or memory for a demo), the PKI and what it serves (\`listen\`: the API molt rollout|machine
talk to, the dashboard, FleetLock, metrics). Runs until SIGINT/SIGTERM.

Options:
${optionLines(OperatorFlags)}
`;

/** The config file `argv` names; undefined when it asks for the usage. */
function flags(argv: readonly string[]): { config: string } | undefined {
  let values: { config?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: parseOptions(OperatorFlags),
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

async function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        resolve(signal);
      });
  });
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
    images: liveImages,
  } = withLivePools(await loadOperatorConfig(path));
  const id = c.config.id ?? `${hostname()}-${String(process.pid)}`;
  const log = (line: string): void => {
    io.out(`${new Date().toISOString()} ${line}\n`);
  };
  const state = await stateOf(c, path, id);
  const [kube, images, capiMachines] = await Promise.all([
    kubeParts(c, path, id, log),
    imagesDepsWithGm(c, path, liveImages.policies),
    capiMachinesOf(c, path),
  ]).catch(async (e: unknown) => {
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
    ...{ releases: plans.api.plans.releases, kubernetes: plans.api, images },
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
          ...{ fileImages: liveImages.fileImages, setImages: liveImages.setImages, gm: images?.gm },
          selection: images && (() => images.lastPlan?.last()?.selection),
        }),
      ...{ releases: parts.releases, ...kubeVersion(kube), kubernetes: plans.driver },
      ...(images !== undefined && { images: imageDriver(images, store, log) }),
      gm: images?.gm,
      imagePolicies: images && liveImages.policies,
      capiMachines,
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
