// SPDX-License-Identifier: Apache-2.0
/**
 * The lab (docs/adr/0007): the whole system on one machine, on real components, kept running by
 * one daemon process (`molt lab run`, started detached by `molt lab up`). It starts
 *
 * - a real registry (docker-registry) holding release 1.0.0 on `stable` and `beta`;
 * - a real Kubernetes control plane (unless `kubernetes: false`), whose nodes are the lab
 *   machines (each agent plays its kubelet), with real workloads under PodDisruptionBudgets — or,
 *   with `vmControlPlanes: M`, none on the host: the cluster runs on M control-plane VMs
 *   (lab-vm-cluster.ts) and its nodes are the VMs;
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
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeControlPlane } from './services/kube-control-plane.ts';
import { applyPools, startKube, startWorkloads } from './lab-kube-setup.ts';
import { freePort } from '../platform/process/free-port.ts';
import { startLabFleet, type LabFleet } from './fleet/fleet.ts';
import {
  createNetnsNetwork,
  loopbackNetwork,
  type LabNetwork,
  type NetworkMode,
} from './fleet/network.ts';
import { startOperator, writeOperatorConfig } from './lab-operator.ts';
import { startClusterOperator, type OperatorPlace } from './lab-cluster-operator.ts';
import { writeLabState, type LabState } from './state.ts';
import { readyState } from './ready-state.ts';
import { prepareVmNodes } from './lab-nodes.ts';
import { firstVmRelease, startLabVms } from './lab-vms.ts';
import type { VmMachines } from './vm/vm-machines.ts';
import { hostNodeCluster, type LabKube } from './lab-kube.ts';
import { controlPlaneBinaries, startVmClusterLab } from './lab-vm-cluster.ts';

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
  /**
   * Control-plane VMs (`--vm-control-planes M`): the cluster runs on them, not on the host
   * (lab-vm-cluster.ts); the lab machines are then no nodes. @default 0
   */
  readonly vmControlPlanes?: number;
}

export interface RunningLab {
  readonly state: LabState;
  stop(): Promise<void>;
}

type Stops = (() => Promise<void>)[];

/**
 * The lab's machines: lab machines (and their etcd), then VMs; each pushed onto `stops`. With
 * control-plane VMs, the cluster comes up with them and is returned as `kube`.
 */
async function startMachines(
  o: LabOptions,
  where: { network: LabNetwork; kube: KubeControlPlane | undefined; checkpoint: () => void },
  stops: Stops,
  log: (line: string) => void,
): Promise<{ fleet: LabFleet; vms: VmMachines | undefined; kube: LabKube | undefined }> {
  const { network, kube, checkpoint } = where;
  const vmControlPlanes = o.vmControlPlanes ?? 0;
  const bins = vmControlPlanes > 0 ? await controlPlaneBinaries(log) : undefined;
  const first = o.vms > 0 ? await firstVmRelease(o, log, bins?.dir) : undefined;
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
  if (bins !== undefined) {
    const lab = await startVmClusterLab(
      { ...o, vmControlPlanes },
      { fleet, network, bins },
      stops,
      log,
    );
    checkpoint();
    await startWorkloads(lab.cluster, lab.nodes, log, true);
    return { fleet, vms: lab.vms, kube: lab.cluster };
  }
  const vms = await startHostClusterVms(o, { fleet, network, kube, checkpoint }, stops, log);
  return { fleet, vms, kube };
}

/** The VMs of a lab whose cluster (if any) runs on the host, and the workloads on its nodes. */
async function startHostClusterVms(
  o: LabOptions,
  where: {
    fleet: LabFleet;
    network: LabNetwork;
    kube: KubeControlPlane | undefined;
    checkpoint: () => void;
  },
  stops: Stops,
  log: (line: string) => void,
): Promise<VmMachines | undefined> {
  const { fleet, network, kube, checkpoint } = where;
  const nodes =
    kube !== undefined && o.vms > 0
      ? await prepareVmNodes(hostNodeCluster(kube), fleet.registry.host, log)
      : undefined;
  // Without lab workers the workloads wait for the VMs: they are the only nodes.
  if (kube !== undefined && o.workers > 0) await startWorkloads(kube, nodes, log, false);
  checkpoint();
  const vms = await startLabVms(o, { fleet, network, kube, nodes }, stops, log);
  checkpoint();
  if (kube !== undefined && o.workers === 0) await startWorkloads(kube, nodes, log, true);
  return vms;
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

/** The operator (a host process, or pods in the cluster) over the lab's machines; the lab's state. */
async function startLabOperator(
  o: LabOptions,
  lab: {
    network: LabNetwork;
    kube: LabKube | undefined;
    fleet: LabFleet;
    vms: VmMachines | undefined;
    logs: string;
  },
  stops: Stops,
  how: { log: (line: string) => void; signal: AbortSignal | undefined },
): Promise<LabState> {
  const { network, kube, fleet, vms, logs } = lab;
  const { log, signal } = how;
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
  signal?.throwIfAborted();
  const operator =
    o.operator === 'cluster' && kube !== undefined && vms !== undefined
      ? await startClusterOperator({ ...o, network, kube, fleet, vms, ...files, log, signal })
      : await hostOperator(o.molt, files.config, logs);
  stops.push(operator.stop);
  signal?.throwIfAborted();
  log(`operator: leading; dashboard at ${operator.dashboard}`);
  return readyState(o, {
    ...{ network, kube, fleet, vms },
    operator: { ...operator, dashboardToken: files.dashboardToken },
  });
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
    const hosted = o.kubernetes && (o.vmControlPlanes ?? 0) === 0;
    const host = hosted ? await startKube(o, network, log) : undefined;
    if (host !== undefined) stops.push(() => host.stop());
    checkpoint();
    const { fleet, vms, kube } = await startMachines(
      o,
      { network, kube: host, checkpoint },
      stops,
      log,
    );
    const state = await startLabOperator(o, { network, kube, fleet, vms, logs }, stops, {
      log,
      signal,
    });
    checkpoint();
    await writeLabState(o.dir, state);
    return { state, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
