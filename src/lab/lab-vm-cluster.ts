// SPDX-License-Identifier: Apache-2.0
/**
 * A lab whose Kubernetes cluster runs on VMs (`molt lab up --vms N --vm-control-planes M`,
 * docs/adr/0018 §4): no control plane on the host. M control-plane VMs (`vm-cp-1`…) run etcd,
 * the three components as systemd units their agents render, and a kubelet; N worker VMs join
 * them. The lab places every VM on its bridge, makes the cluster's PKI for the first control
 * plane's address, installs each disk (control planes with `--kube-pki`), boots the control
 * planes, waits for the API server and applies molt's CRDs and RBAC, then boots the workers and
 * waits for every Node.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { kubeBinaries } from '../platform/kube/binaries.ts';
import type { LabFleet } from './fleet/fleet.ts';
import type { LabNetwork } from './fleet/network.ts';
import { vmNodeCluster } from './lab-kube.ts';
import { joinVmNodes, prepareVmNodes, type VmNodes } from './lab-nodes.ts';
import type { VmLabOptions } from './lab-vms.ts';
import { planVmCluster, type VmCluster, type VmMember } from './vm/vm-cluster.ts';
import {
  placeVms,
  startVmMachines,
  VmControlPlanePool,
  VmPool,
  workerVmNames,
  type VmMachines,
} from './vm/vm-machines.ts';

const run = promisify(execFile);

/**
 * How long the first control plane has to answer: under TCG its first boot runs etcd and three Go
 * binaries on one emulated CPU, beside the other VMs' boots.
 */
const ApiFirstAnswerMs = 25 * 60_000;

/** The names of `count` control-plane VMs. */
export const controlPlaneVmNames = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => `vm-cp-${String(i + 1)}`);

/** The control planes' binaries (the previous minor, as the nodes' first kubelet) and version. */
export async function controlPlaneBinaries(
  log: (line: string) => void,
): Promise<{ readonly dir: string; readonly version: string }> {
  const dir = await kubeBinaries((line) => {
    log(`Kubernetes: ${line.replace(/^molt: /, '')}`);
  }, '--previous');
  const { stdout } = await run(join(dir, 'kube-apiserver'), ['--version']);
  const version = stdout.trim().split(' ').at(-1) ?? '';
  return { dir, version };
}

export interface VmClusterLab {
  readonly cluster: VmCluster;
  readonly vms: VmMachines;
  readonly nodes: VmNodes;
}

/** Start the cluster's VMs and wait until its API answers and every Node is Ready. */
export async function startVmClusterLab(
  o: VmLabOptions & { readonly vmControlPlanes: number },
  with_: {
    readonly fleet: LabFleet;
    readonly network: LabNetwork;
    readonly bins: { readonly dir: string; readonly version: string };
  },
  stops: (() => Promise<void>)[],
  log: (line: string) => void,
): Promise<VmClusterLab> {
  const { fleet, network, bins } = with_;
  const controlPlanes = controlPlaneVmNames(o.vmControlPlanes);
  const workers = workerVmNames(o.vms);
  const places = await placeVms([...controlPlanes, ...workers], (name) => network.vmPort(name));
  const members: VmMember[] = places.flatMap((p) =>
    controlPlanes.includes(p.name) && p.port !== undefined
      ? [{ name: p.name, address: p.port.address }]
      : [],
  );
  if (members.length !== controlPlanes.length)
    throw new MoltError(ErrorCode.LabFailed, 'control-plane VMs need the lab bridge', {
      hint: 'run the lab as root with --network netns',
    });
  const cluster = await planVmCluster({
    labDir: o.dir,
    members,
    agents: places.map((p) => p.name),
    bins: bins.dir,
    version: bins.version,
  });
  log(
    `Kubernetes: cluster ${cluster.name} (PKI in ${cluster.pkiDir}) on ${controlPlanes.join(', ')}, Kubernetes ${bins.version}, API at ${cluster.server}`,
  );
  const nodes = await prepareVmNodes(vmNodeCluster(cluster), fleet.registry.host, log);
  log(
    `VMs: installing ${String(places.length)} disk(s) with release 1.0.0 (molt install), then booting`,
  );
  const vms = await startVmMachines({
    labDir: o.dir,
    molt: o.molt,
    count: places.length,
    places,
    cluster,
    pki: fleet.pki,
    registry: fleet.registry.host,
    image: fleet.image('1.0.0'),
    kubernetes: nodes.kubernetes,
    // The workers boot once the API answers: beside them the first control plane's start under
    // TCG took 16 minutes, and the API server then timed out applying the CRDs.
    first: {
      names: controlPlanes,
      then: () => cluster.ready({ timeoutMs: ApiFirstAnswerMs, log }),
    },
    log,
  });
  stops.push(() => vms.stop());
  await joinVmNodes(cluster, controlPlanes, VmControlPlanePool, log);
  await joinVmNodes(cluster, workers, VmPool, log);
  return { cluster, vms, nodes };
}
