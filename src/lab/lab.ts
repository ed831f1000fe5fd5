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
 * - with `vms: N`, N VMs booting from disks molt installed (vm/vm-machines.ts), every machine
 *   then starting on the real OS release 1.0.0 built by `molt image build`;
 * - `molt operator` with its mTLS API, its dashboard and, with Kubernetes, its CRD mirror.
 *
 * The pools and their policies are in lab-operator.ts. Everything lives in
 * the lab directory (`lab.json` says what runs where; `logs/` has every process's output), and
 * everything stops by PID when the daemon gets SIGTERM (`molt lab down`).
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadKubeConfig } from '../platform/kube/client.ts';
import { packageFile } from '../platform/package-files.ts';
import { startKubeControlPlane, type KubeControlPlane } from './services/kube-control-plane.ts';
import { freePort } from '../platform/process/free-port.ts';
import { startLabFleet, type LabFleet } from './fleet/fleet.ts';
import {
  createNetnsNetwork,
  loopbackNetwork,
  type LabNetwork,
  type NetworkMode,
} from './fleet/network.ts';
import { workloads } from './fleet/workloads.ts';
import { startOperator, writeOperatorConfig } from './lab-operator.ts';
import { startClusterOperator, type OperatorPlace } from './lab-cluster-operator.ts';
import { writeLabState, type LabState } from './state.ts';
import { readyState } from './ready-state.ts';
import { prepareVmNodes, type VmNodes } from './lab-nodes.ts';
import { firstVmRelease, startLabVms, vmNames } from './lab-vms.ts';
import { VmPool, type VmMachines } from './vm/vm-machines.ts';
import { PoolLabel } from '../protocol/kube-resources.ts';

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
  /** VM machines (`--vms N`): real disks booted by QEMU, in pool `vms` (vm/vm-machines.ts). */
  readonly vms: number;
  /** The argv that starts molt (`[node, …/bin/molt.js]`): machines and the operator run it. */
  readonly molt: readonly string[];
  /** The operator as a host process, or as pods on the VM nodes (lab-cluster-operator.ts). @default 'host' */
  readonly operator?: OperatorPlace;
}

export interface RunningLab {
  readonly state: LabState;
  stop(): Promise<void>;
}

/** Every node with a kubelet and an agent identity: the lab machines', and the VMs' agents. */
const nodeNames = (workers: number, vms: number): string[] => [
  'cp-1',
  'cp-2',
  'cp-3',
  ...Array.from({ length: workers }, (_, i) => `w-${String(i + 1)}`),
  ...vmNames(vms),
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
    nodes: nodeNames(o.workers, o.vms),
    // VM nodes under TCG pause for seconds while a neighbour boots; 40 s is Kubernetes' own default.
    ...(o.vms > 0 && { nodeMonitorGraceSeconds: 40 }),
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

/**
 * The lab's workloads. With VM nodes they run the lab's busybox image (a web server, its default
 * command), which a real node pulls and runs, and the lab's kubelet stand-ins mark Running.
 */
async function startWorkloads(
  kube: KubeControlPlane,
  nodes: VmNodes | undefined,
  log: (line: string) => void,
  onVmsOnly: boolean,
): Promise<void> {
  // Without lab workers the VMs are the workers: the lab's control-plane machines stay free of them.
  const image =
    nodes === undefined
      ? undefined
      : {
          image: nodes.workloadImage,
          ...(onVmsOnly && { nodeSelector: { [PoolLabel]: VmPool } }),
        };
  const w = workloads(await loadKubeConfig(kube.admin.kubeconfig), image);
  const ns = await w.namespace('shop');
  await w.deployment(ns, 'web', 6);
  await w.statefulSet(ns, 'db', 3);
  await w.running(ns, 9, nodes === undefined ? undefined : 10 * 60_000);
  await w.pdb(ns, 'web', 'web', 5);
  await w.pdb(ns, 'db', 'db', 2);
  log(
    'Kubernetes: workloads shop/web (6 pods, PDB minAvailable 5) and shop/db (StatefulSet, 3, PDB minAvailable 2)',
  );
}

type Stops = (() => Promise<void>)[];

/** The lab's machines: lab machines (and their etcd), then VMs; each pushed onto `stops`. */
async function startMachines(
  o: LabOptions,
  where: { network: LabNetwork; kube: KubeControlPlane | undefined; checkpoint: () => void },
  stops: Stops,
  log: (line: string) => void,
): Promise<{ fleet: LabFleet; vms: VmMachines | undefined }> {
  const { network, kube, checkpoint } = where;
  const first = o.vms > 0 ? await firstVmRelease(o, log) : undefined;
  log(
    `machines: registry, 3 control-plane and ${String(o.workers)} workers installing release 1.0.0`,
  );
  const fleet = await startLabFleet({
    ...(first !== undefined && { firstRelease: first }),
    molt: o.molt,
    workers: o.workers,
    dir: join(o.dir, 'fleet'),
    logDir: join(o.dir, 'logs'),
    network,
    ...(kube !== undefined && {
      kubernetes: (name: string) => ({
        kubeconfig: kube.agent(name).kubeconfig,
        labKubelet: { kubeconfig: kube.node(name).kubeconfig },
        drain: { timeoutSeconds: 120 },
      }),
    }),
  });
  stops.push(() => fleet.stop());
  checkpoint();
  log(
    `machines: ${fleet.all.length} up, etcd cluster healthy (${fleet.storeEndpoints.join(', ')})`,
  );
  const nodes =
    kube !== undefined && o.vms > 0
      ? await prepareVmNodes(kube, fleet.registry.host, log)
      : undefined;
  // Without lab workers the workloads wait for the VMs: they are the only nodes.
  if (kube !== undefined && o.workers > 0) await startWorkloads(kube, nodes, log, false);
  checkpoint();
  const vms = await startLabVms(o, { fleet, network, kube, nodes }, stops, log);
  checkpoint();
  if (kube !== undefined && o.workers === 0) await startWorkloads(kube, nodes, log, true);
  return { fleet, vms };
}

/** The lab's pools as molt.dev Pools (docs/adr/0011): people change them with kubectl. */
async function applyPools(
  kube: KubeControlPlane | undefined,
  pools: string | undefined,
  log: (line: string) => void,
): Promise<void> {
  if (kube === undefined || pools === undefined) return;
  await run(join(kube.bins, 'kubectl'), [
    ...['--kubeconfig', kube.admin.kubeconfig, 'apply', '-f', pools],
  ]);
  log('Kubernetes: the lab’s pools applied as molt.dev Pools (molt lab kubectl get pools -A)');
}

/** The machines' network: loopback ports, or a bridge with a namespace per machine. */
async function startNetwork(
  o: LabOptions,
  stops: Stops,
  log: (line: string) => void,
): Promise<LabNetwork> {
  const network = o.network === 'netns' ? await createNetnsNetwork(o.dir) : loopbackNetwork();
  stops.push(() => network.remove());
  if (network.mode === 'netns')
    log(
      `network: bridge ${network.record()?.bridge ?? ''} at ${network.hostAddress}, a namespace per machine`,
    );
  return network;
}

/** The operator as a process of the lab daemon. */
async function hostOperator(molt: readonly string[], config: string, logs: string) {
  const operator = await startOperator(molt, config, logs);
  return { ...operator, stop: () => operator.process.stop(10_000) };
}

/**
 * Start the lab; on failure everything started so far is stopped again. When `signal` aborts (the
 * daemon was told to stop while starting), the start ends at its next step with the signal's
 * reason, and what it started is stopped the same way.
 */
export async function startLab(
  o: LabOptions,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<RunningLab> {
  const logs = join(o.dir, 'logs');
  await mkdir(logs, { recursive: true });
  const stops: Stops = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  const checkpoint = (): void => signal?.throwIfAborted();
  try {
    const network = await startNetwork(o, stops, log);
    checkpoint();
    const kube = o.kubernetes ? await startKube(o, network, log) : undefined;
    if (kube !== undefined) stops.push(() => kube.stop());
    checkpoint();
    const { fleet, vms } = await startMachines(o, { network, kube, checkpoint }, stops, log);
    const ports = {
      api: await freePort(),
      dashboard: o.dashboardPort === 0 ? await freePort() : o.dashboardPort,
    };
    const files = await writeOperatorConfig(
      { ...o, ports, kubeconfig: kube?.operator.kubeconfig },
      fleet,
      vms?.machines ?? [],
    );
    await applyPools(kube, files.pools, log);
    checkpoint();
    const operator =
      o.operator === 'cluster' && kube !== undefined && vms !== undefined
        ? await startClusterOperator({ ...o, network, kube, fleet, vms, ...files, log, signal })
        : await hostOperator(o.molt, files.config, logs);
    stops.push(operator.stop);
    checkpoint();
    log(`operator: leading; dashboard at ${operator.dashboard}`);
    const state = readyState(o, {
      ...{ network, kube, fleet, vms },
      operator: { ...operator, dashboardToken: files.dashboardToken },
    });
    await writeLabState(o.dir, state);
    return { state, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
