// SPDX-License-Identifier: Apache-2.0
/**
 * One lab VM's disk (docs/adr/0007, 0015, 0018): its machine config, node certificate and, for a
 * node, its cluster files, then `molt install` (run as a child process, the installer's own
 * code) writing `disk.img` under `<lab>/vms/<name>/`. A control-plane VM of a cluster on VMs
 * (`--vm-control-planes`) also gets the cluster's PKI (`molt install --kube-pki`), etcd and the
 * three components (vm-control-plane.ts), and more memory.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { writePrivateFile } from '../../platform/fs/private-file.ts';
import { issueToDir } from '../../platform/pki/store.ts';
import type { MachineConfigInput } from '../../protocol/machine-config.ts';
import type { FleetPki } from '../fleet/machine.ts';
import type { VmPort } from '../fleet/network.ts';
import { labVmDir } from './lab-vm.ts';
import type { VmCluster } from './vm-cluster.ts';
import { controlPlaneVmConfig } from './vm-control-plane.ts';
import { guestAddress, nodeFiles, podRoutes, type VmKubernetes } from './vm-node.ts';
import { type BootloaderName } from '../../core/boot/bootloaders.ts';

const run = promisify(execFile);

/** The agent's port inside the guest. */
export const VmAgentPort = 7443;
/** Each slot partition: a control-plane image's squashfs is ~320 MB. */
const SlotSize = '512M';
const DiskSize = '2G';
/** A control plane's STATE holds its Kubernetes bundles (1G: `molt install`'s default there). */
const ControlPlaneDiskSize = '4G';
/**
 * TCG boots slowly: a new slot has two minutes to become healthy, a node four (containerd and
 * the kubelet start after the agent, and its Node must turn Ready), a control plane ten (etcd,
 * then three Go binaries on one emulated CPU before its kubelet can register).
 */
const HealthDeadlineSeconds = 120;
const NodeHealthDeadlineSeconds = 240;
const ControlPlaneHealthDeadlineSeconds = 600;
/** A VM running containerd and a kubelet beside the agent needs more than the default 1 GiB. */
export const NodeMemoryMiB = 2048;
/** etcd, the API server (~300 MiB), the controller manager, the scheduler, a kubelet, the agent. */
export const ControlPlaneMemoryMiB = 3072;

/** What installing a lab VM needs of the lab. */
export interface VmInstallOptions {
  readonly labDir: string;
  /** The argv that starts molt (`[node, …/bin/molt.js]`). */
  readonly molt: readonly string[];
  readonly pki: FleetPki;
  readonly registry: string;
  readonly image: string;
  readonly kubernetes?: VmKubernetes | undefined;
  /** The cluster whose control planes are VMs (`cluster.members` names them). */
  readonly cluster?: VmCluster | undefined;
}

/**
 * A VM reaches its host's loopback at 10.0.2.2 (QEMU user networking): a registry published on
 * loopback is mirrored there. Any other host address (the netns bridge) the VM reaches as is.
 */
function mirrors(registry: string): Record<string, string> {
  const guest = guestAddress(registry);
  return guest === registry ? {} : { [registry]: guest };
}

/** Where each VM sits: its name, 1-based index, and its bridge port when the lab has one. */
export interface VmPlace {
  readonly name: string;
  readonly index: number;
  readonly port: VmPort | undefined;
}

/**
 * The config's `network`: the bridge NIC's static address and, for nodes, the routes to the
 * other VMs' pods (their addresses on the bridge; docs/adr/0018).
 */
function bridgeNetwork(
  o: VmInstallOptions,
  vm: VmPlace,
  all: readonly VmPlace[],
): MachineConfigInput['network'] {
  if (vm.port === undefined) return undefined;
  const addresses = all.map((v) => v.port?.address ?? '');
  const routes = o.kubernetes === undefined ? [] : podRoutes(addresses, vm.index);
  return { interfaces: [{ mac: vm.port.tap.mac, addresses: [`${vm.port.address}/24`], routes }] };
}

/** Control-plane VM `name`'s config sections, or none for a worker. */
function controlPlaneOf(o: VmInstallOptions, name: string): Partial<MachineConfigInput> {
  const c = o.cluster;
  const at = c?.members.findIndex((m) => m.name === name) ?? -1;
  const member = c?.members[at];
  if (c === undefined || member === undefined) return {};
  return {
    ...controlPlaneVmConfig({
      name,
      address: member.address,
      members: c.members,
      cluster: c.name,
      version: c.version,
      bootstrap: at === 0,
    }),
    healthDeadlineSeconds: ControlPlaneHealthDeadlineSeconds,
  };
}

/** Whether VM `name` is a control plane of the lab's cluster on VMs. */
export const isControlPlaneVm = (o: Pick<VmInstallOptions, 'cluster'>, name: string): boolean =>
  o.cluster?.members.some((m) => m.name === name) ?? false;

/** `molt install`'s arguments for VM `vm.name`. */
function installArgs(
  o: VmInstallOptions,
  vm: { name: string; dir: string; disk: string; configFile: string; pki: string },
  bootloader: { efi?: string },
  kubeconfig: string | undefined,
): string[] {
  const { dir, disk, configFile, pki } = vm;
  const controlPlane = isControlPlaneVm(o, vm.name);
  const clusterPki = controlPlane ? o.cluster?.pkiDir : undefined;
  const diskSize = controlPlane ? ControlPlaneDiskSize : DiskSize;
  return [
    ...['install', '--disk', disk, '--image', o.image, '--config', configFile, '--pki', pki],
    ...['--slot-size', SlotSize, '--disk-size', diskSize, '--insecure', '--work-dir', dir],
    ...(bootloader.efi === undefined ? [] : ['--efi-binary', bootloader.efi]),
    ...(kubeconfig === undefined ? [] : ['--kubeconfig', kubeconfig]),
    ...(clusterPki === undefined ? [] : ['--kube-pki', clusterPki]),
  ];
}

/** Write VM `vm.name`'s config, certificate and disk (`molt install`); resolves with the disk. */
export async function installVm(
  o: VmInstallOptions,
  vm: VmPlace,
  all: readonly VmPlace[],
  bootloader: { name: BootloaderName; efi?: string },
): Promise<string> {
  const { name } = vm;
  const dir = labVmDir(o.labDir, name);
  // A new lab installs its VMs afresh: the old disk, variable store and console go.
  await rm(dir, { recursive: true, force: true });
  const pki = join(dir, 'pki');
  await mkdir(pki, { recursive: true, mode: 0o700 });
  await copyFile(join(o.pki.dir, 'ca.pem'), join(pki, 'ca.pem'));
  await issueToDir({
    caDir: o.pki.dir,
    outDir: pki,
    role: 'node',
    name,
    // The host reaches the agent through a forwarded port, pods and lab machines on the bridge.
    sans: ['127.0.0.1', ...(vm.port === undefined ? [] : [vm.port.address])],
    days: 30,
  });
  const node =
    o.kubernetes === undefined
      ? undefined
      : await nodeFiles(o.kubernetes, dir, { ...vm, address: vm.port?.address });
  const network = bridgeNetwork(o, vm, all);
  const config: MachineConfigInput = {
    node: name,
    role: 'worker',
    bootloader: bootloader.name,
    api: { host: '0.0.0.0', port: VmAgentPort },
    healthDeadlineSeconds: node === undefined ? HealthDeadlineSeconds : NodeHealthDeadlineSeconds,
    registry: { insecure: true, mirrors: mirrors(o.registry) },
    disk: {},
    ...(node !== undefined && { kubernetes: node.kubernetes }),
    ...(network !== undefined && { network }),
    ...controlPlaneOf(o, name),
  };
  const configFile = join(dir, 'config.yaml');
  await writePrivateFile(configFile, stringify(config));
  const disk = join(dir, 'disk.img');
  const [command = process.execPath, ...prefix] = o.molt;
  const args = installArgs(o, { name, dir, disk, configFile, pki }, bootloader, node?.kubeconfig);
  try {
    await run(command, [...prefix, ...args], { maxBuffer: 16 * 2 ** 20 });
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr ?? String(e);
    throw new MoltError(ErrorCode.LabFailed, `molt install of VM ${name} failed:\n${stderr}`, {
      cause: e,
    });
  }
  return disk;
}
