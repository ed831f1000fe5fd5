// SPDX-License-Identifier: Apache-2.0
/**
 * The lab (docs/adr/0007): the whole system on one machine, on real components, kept running by
 * one daemon process (`molt lab run`, started detached by `molt lab up`). It starts
 *
 * - a real registry (docker-registry) holding release 1.0.0 on `stable` and `beta`;
 * - a real Kubernetes control plane (unless `kubernetes: false`), whose nodes are the lab
 *   machines (each agent plays its kubelet), with real workloads under PodDisruptionBudgets;
 * - three control-plane lab machines running the etcd cluster that also holds the operator's
 *   state, and N workers — each a `molt lab machine` process (firmware, bootloader, agent);
 * - `molt operator` with its mTLS API, its dashboard and, with Kubernetes, its CRD mirror.
 *
 * The pools: `control-plane` follows `stable`, one machine at a time; `workers` follows `beta`,
 * a canary, then a third of the pool at a time, halting at the first failure. Everything lives in
 * the lab directory (`lab.json` says what runs where; `logs/` has every process's output), and
 * everything stops by PID when the daemon gets SIGTERM (`molt lab down`).
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { issueToDir } from '../platform/pki/store.ts';
import { loadKubeConfig } from '../platform/kube/client.ts';
import { packageFile } from '../platform/package-files.ts';
import { OperatorDashboardPrefix, OperatorServingPrefix } from '../protocol/operator.ts';
import { startKubeControlPlane, type KubeControlPlane } from './services/kube-control-plane.ts';
import { freePort } from '../platform/process/free-port.ts';
import { startProcess, type ManagedProcess } from '../platform/process/managed-process.ts';
import { repository, startLabFleet, type LabFleet } from './fleet/fleet.ts';
import {
  createNetnsNetwork,
  loopbackNetwork,
  type LabNetwork,
  type NetworkMode,
} from './fleet/network.ts';
import { writeOperatorFiles } from './fleet/operator-files.ts';
import { workloads } from './fleet/workloads.ts';
import { writeLabState, type LabState } from './state.ts';

const run = promisify(execFile);

export interface LabOptions {
  readonly dir: string;
  readonly workers: number;
  readonly kubernetes: boolean;
  /** Shorter soaks (the demo's `--fast`). */
  readonly fast: boolean;
  /** Dashboard port; 0 picks a free one. */
  readonly dashboardPort: number;
  /** Machines on loopback ports, or in network namespaces of their own (root). */
  readonly network: NetworkMode;
  /** The argv that starts molt (`[node, …/bin/molt.js]`): machines and the operator run it. */
  readonly molt: readonly string[];
}

export interface RunningLab {
  readonly state: LabState;
  stop(): Promise<void>;
}

const nodeNames = (workers: number): string[] => [
  'cp-1',
  'cp-2',
  'cp-3',
  ...Array.from({ length: workers }, (_, i) => `w-${String(i + 1)}`),
];

async function startKube(
  o: LabOptions,
  network: LabNetwork,
  log: (line: string) => void,
): Promise<KubeControlPlane> {
  log(
    'Kubernetes: control plane (the first run builds its binaries from the Go module proxy: about 17 min on 2 cores)',
  );
  const kube = await startKubeControlPlane({
    nodes: nodeNames(o.workers),
    address: network.hostAddress,
    dir: join(o.dir, 'kube'),
    onProgress: (line) => {
      log(`Kubernetes: ${line.replace(/^molt: /, '')}`);
    },
  });
  const deploy = packageFile('deploy', 'kubernetes');
  for (const manifest of ['rbac.yaml', 'operator-rbac.yaml'])
    await run(join(kube.bins, 'kubectl'), [
      '--kubeconfig',
      kube.admin.kubeconfig,
      'apply',
      '-f',
      join(deploy, manifest),
    ]);
  log(`Kubernetes: API at ${kube.server}`);
  return kube;
}

async function startWorkloads(kube: KubeControlPlane, log: (line: string) => void): Promise<void> {
  const w = workloads(await loadKubeConfig(kube.admin.kubeconfig));
  const ns = await w.namespace('shop');
  await w.deployment(ns, 'web', 6);
  await w.statefulSet(ns, 'db', 3);
  await w.running(ns, 9);
  await w.pdb(ns, 'web', 'web', 5);
  await w.pdb(ns, 'db', 'db', 2);
  log(
    'Kubernetes: workloads shop/web (6 pods, PDB minAvailable 5) and shop/db (StatefulSet, 3, PDB minAvailable 2)',
  );
}

async function writeOperatorConfig(
  o: LabOptions,
  fleet: LabFleet,
  kube: KubeControlPlane | undefined,
  ports: { api: number; dashboard: number },
): Promise<string> {
  const pki = fleet.pki.dir;
  await issueToDir({
    caDir: pki,
    outDir: pki,
    role: 'node',
    name: 'operator-api',
    sans: [],
    days: 30,
  });
  return writeOperatorFiles(fleet, {
    pools: [
      {
        name: 'control-plane',
        channel: 'stable',
        policies: [{ concurrency: 1 }, { machineSoak: o.fast ? '1s' : '10s' }],
      },
      {
        name: 'workers',
        channel: 'beta',
        policies: [
          { canary: { count: 1, soak: o.fast ? '2s' : '20s' } },
          { concurrency: '33%' },
          { failureBudget: 1 },
        ],
      },
    ],
    config: {
      pki: {
        ca: join(pki, 'ca.pem'),
        cert: join(pki, 'operator.pem'),
        key: join(pki, 'operator.key'),
        serverCert: join(pki, 'operator-api.pem'),
        serverKey: join(pki, 'operator-api.key'),
      },
      id: 'lab-operator',
      discoverEvery: '2s',
      listen: { host: '127.0.0.1', port: ports.api },
      dashboard: { listen: { host: '127.0.0.1', port: ports.dashboard } },
      ...(kube !== undefined && { kubernetes: { kubeconfig: kube.operator.kubeconfig } }),
    },
  });
}

async function startOperator(
  molt: readonly string[],
  config: string,
  logs: string,
): Promise<{ process: ManagedProcess; api: string; dashboard: string }> {
  const [command = process.execPath, ...prefix] = molt;
  const operator = startProcess(
    'molt operator',
    command,
    [...prefix, 'operator', '--config', config],
    {
      logFile: join(logs, 'operator.log'),
    },
  );
  const api =
    (await operator.waitFor(new RegExp(`${OperatorServingPrefix}(\\S+)`), 60_000))[1] ?? '';
  const dashboard =
    (await operator.waitFor(new RegExp(`${OperatorDashboardPrefix}(\\S+)`), 60_000))[1] ?? '';
  await operator.waitFor(/leading as/, 60_000);
  return { process: operator, api, dashboard };
}

function networkState(network: LabNetwork): LabState['network'] {
  const r = network.record();
  return r === undefined
    ? { mode: network.mode }
    : { mode: network.mode, bridge: r.bridge, subnet: r.subnet, namespaces: [...r.namespaces] };
}

/** Start the lab; on failure everything started so far is stopped again. */
export async function startLab(o: LabOptions, log: (line: string) => void): Promise<RunningLab> {
  const logs = join(o.dir, 'logs');
  await mkdir(logs, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const network = o.network === 'netns' ? await createNetnsNetwork(o.dir) : loopbackNetwork();
    stops.push(() => network.remove());
    if (network.mode === 'netns')
      log(
        `network: bridge ${network.record()?.bridge ?? ''} at ${network.hostAddress}, a namespace per machine`,
      );
    const kube = o.kubernetes ? await startKube(o, network, log) : undefined;
    if (kube !== undefined) stops.push(() => kube.stop());
    log(
      `machines: registry, 3 control-plane and ${String(o.workers)} workers installing release 1.0.0`,
    );
    const fleet = await startLabFleet({
      molt: o.molt,
      workers: o.workers,
      dir: join(o.dir, 'fleet'),
      logDir: logs,
      network,
      ...(kube !== undefined && {
        kubernetes: (name: string) => ({
          kubeconfig: kube.agent.kubeconfig,
          labKubelet: { kubeconfig: kube.node(name).kubeconfig },
          drain: { timeoutSeconds: 120 },
        }),
      }),
    });
    stops.push(() => fleet.stop());
    log(
      `machines: ${fleet.all.length} up, etcd cluster healthy (${fleet.storeEndpoints.join(', ')})`,
    );
    if (kube !== undefined) await startWorkloads(kube, log);
    const ports = {
      api: await freePort(),
      dashboard: o.dashboardPort === 0 ? await freePort() : o.dashboardPort,
    };
    const config = await writeOperatorConfig(o, fleet, kube, ports);
    const operator = await startOperator(o.molt, config, logs);
    stops.push(() => operator.process.stop(10_000));
    log(`operator: leading; dashboard at ${operator.dashboard}`);
    const state: LabState = {
      pid: process.pid,
      state: 'ready',
      startedAt: new Date().toISOString(),
      dir: o.dir,
      registry: fleet.registry.host,
      repository,
      operator: { api: operator.api, dashboard: operator.dashboard },
      pki: fleet.pki.dir,
      network: networkState(network),
      ...(kube !== undefined && {
        kubeconfig: kube.admin.kubeconfig,
        kubectl: join(kube.bins, 'kubectl'),
      }),
      machines: fleet.machines.map((m) => ({
        id: m.id,
        role: m.role,
        pool: m.pool,
        endpoint: m.endpoint,
      })),
    };
    await writeLabState(o.dir, state);
    return { state, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
