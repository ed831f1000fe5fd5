// SPDX-License-Identifier: Apache-2.0
/** The lab's VMs (`molt lab up --vms N`): their first OS release and their start (docs/adr/0007, 0015). */
import { join } from 'node:path';
import type { LabFleet, LabFleetOptions } from './fleet/fleet.ts';
import type { LabNetwork } from './fleet/network.ts';
import type { LabKube } from './lab-kube.ts';
import { joinVmNodes, nodeRuntimeFor, type VmNodes } from './lab-nodes.ts';
import {
  startVmMachines,
  VmChannel,
  VmPool,
  workerVmNames,
  type VmMachines,
} from './vm/vm-machines.ts';
import { buildVmRelease } from './vm/vm-release.ts';

/** What of the lab's options its VMs need. */
export interface VmLabOptions {
  readonly dir: string;
  readonly molt: readonly string[];
  readonly kubernetes: boolean;
  readonly vms: number;
}

/**
 * A lab with VMs starts every machine on the real OS release 1.0.0 (`molt image build`): lab
 * machines install it into slot files like any release, VMs onto their disks. One release 1.0.0
 * in the repository, on the VMs' channel too, so the version names one image for the whole lab.
 */
export async function firstVmRelease(
  o: VmLabOptions,
  log: (line: string) => void,
  controlPlane?: string,
): Promise<NonNullable<LabFleetOptions['firstRelease']>> {
  const kubernetesNode = o.kubernetes ? await nodeRuntimeFor('1.0.0', log) : undefined;
  log(
    `VMs: OS release 1.0.0${kubernetesNode === undefined ? '' : ' with a node runtime'}${controlPlane === undefined ? '' : ' and a control plane'} (molt image build, cached by content under .molt/images)`,
  );
  const release = await buildVmRelease({
    molt: o.molt,
    version: '1.0.0',
    out: join(o.dir, 'images', '1.0.0'),
    ...(kubernetesNode !== undefined && { kubernetesNode }),
    ...(controlPlane !== undefined && { kubernetesControlPlane: controlPlane }),
    log: (line) => {
      log(`VMs: ${line}`);
    },
  });
  return {
    artifacts: release.artifacts,
    channels: `stable,beta,${VmChannel}`,
    labels: release.labels,
  };
}

async function startVms(
  o: VmLabOptions,
  with_: { fleet: LabFleet; network: LabNetwork; nodes: VmNodes | undefined },
  log: (line: string) => void,
): Promise<VmMachines> {
  const { fleet, network, nodes } = with_;
  log(`VMs: installing ${String(o.vms)} disk(s) with release 1.0.0 (molt install), then booting`);
  const vms = await startVmMachines({
    labDir: o.dir,
    molt: o.molt,
    count: o.vms,
    pki: fleet.pki,
    registry: fleet.registry.host,
    image: fleet.image('1.0.0'),
    ...(nodes !== undefined && { kubernetes: nodes.kubernetes }),
    vmPort: (name) => network.vmPort(name),
    log,
  });
  log(`VMs: ${vms.vms.map((v) => v.record.name).join(', ')} up in pool ${VmPool}`);
  return vms;
}

/**
 * The lab's VMs, if it has any: installed, booted, stopped with the lab (`stops`); as nodes of
 * `kube` when `nodes` says how they join, each then waited for until its Node is Ready.
 */
export async function startLabVms(
  o: VmLabOptions,
  with_: {
    fleet: LabFleet;
    network: LabNetwork;
    kube: LabKube | undefined;
    nodes: VmNodes | undefined;
  },
  stops: (() => Promise<void>)[],
  log: (line: string) => void,
): Promise<VmMachines | undefined> {
  if (o.vms === 0) return undefined;
  const vms = await startVms(o, with_, log);
  stops.push(() => vms.stop());
  if (with_.kube !== undefined && with_.nodes !== undefined)
    await joinVmNodes(with_.kube, workerVmNames(o.vms), VmPool, log);
  return vms;
}
