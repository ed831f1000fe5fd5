// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's VM machines (`molt lab up --vms N`, docs/adr/0007): each a disk written by
 * `molt install` (run as a child process, the installer's own code) under `<lab>/vms/<name>/`,
 * booted by OVMF and the real bootloader under the VM runner, its agent reached at a port
 * forwarded to 127.0.0.1 — the endpoint the operator's fleet file names. Their pool `vms` has its
 * own channel and policies. With {@link VmMachinesOptions.kubernetes} each VM is a real node of the
 * lab's cluster (docs/adr/0015): its release carries containerd and a kubelet, its config names
 * the cluster and a bootstrap token, and its agent drains and uncordons its own Node.
 */
import { execFile } from 'node:child_process';
import { access, copyFile, mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { writePrivateFile } from '../../platform/fs/private-file.ts';
import { issueToDir } from '../../platform/pki/store.ts';
import { eventually } from '../../platform/process/managed-process.ts';
import type { MachineConfigInput } from '../../protocol/machine-config.ts';
import type { LabMachineRecord } from '../fleet/fleet.ts';
import { agentStatus, type FleetPki } from '../fleet/machine.ts';
import type { VmPort } from '../fleet/network.ts';
import { labVmDir, startLabVm, type LabVm } from './lab-vm.ts';
import { logTail, readSerial } from './serial-log.ts';
import { guestAddress, nodeFiles, podRoutes, type VmKubernetes } from './vm-node.ts';

export type { VmKubernetes } from './vm-node.ts';

const run = promisify(execFile);

/** The agent's port inside the guest. */
export const VmAgentPort = 7443;
/** The pool the lab's VMs are in, and the channel it follows. */
export const VmPool = 'vms';
export const VmChannel = 'vm';
/** Each slot partition: the 1.x images' squashfs is ~150 MB. */
const SlotSize = '512M';
const DiskSize = '2G';
/**
 * TCG boots slowly: a new slot has two minutes to become healthy, a node four (containerd and
 * the kubelet start after the agent, and its Node must turn Ready).
 */
const HealthDeadlineSeconds = 120;
const NodeHealthDeadlineSeconds = 240;
/** A VM running containerd and a kubelet beside the agent needs more than the default 1 GiB. */
export const NodeMemoryMiB = 2048;
/**
 * How long a first boot may take before its agent answers. Alone under TCG it is about a minute,
 * but a busy machine (a CI runner with a control plane starting beside it) has stretched it past
 * six: a VM that is still running gets this long, one whose QEMU exits ends the wait at once.
 */
const FirstBootMs = 15 * 60_000;

export interface VmMachinesOptions {
  readonly labDir: string;
  /** The argv that starts molt (`[node, …/bin/molt.js]`). */
  readonly molt: readonly string[];
  readonly count: number;
  /** The fleet's PKI: its CA issues each VM's node certificate; the operator's identity asks. */
  readonly pki: FleetPki;
  /** The registry as releases are published (`host:port`). */
  readonly registry: string;
  /** The release each VM installs into slot A. */
  readonly image: string;
  /** @default 1024, or {@link NodeMemoryMiB} for nodes */
  readonly memoryMiB?: number;
  /** Make each VM a real node of this cluster (TLS bootstrap with `bootstrapToken`). */
  readonly kubernetes?: VmKubernetes;
  /**
   * Each VM's port on the lab bridge (netns labs): its name to its tap and address. Without one,
   * a VM has QEMU's user network only.
   */
  readonly vmPort?: (name: string) => Promise<VmPort | undefined>;
  readonly log: (line: string) => void;
}

export interface VmMachines {
  readonly vms: readonly LabVm[];
  /** The VMs as the fleet file lists them (pool `vms`), reached through forwarded ports. */
  readonly machines: readonly LabMachineRecord[];
  /**
   * The same machines at their addresses on the lab bridge (netns labs; empty otherwise): how a
   * process on the bridge, or a pod on a VM, reaches the agents.
   */
  readonly onBridge: readonly LabMachineRecord[];
  /** Each VM's bridge address by its 1-based index (netns labs). */
  readonly addresses: readonly string[];
  stop(): Promise<void>;
}

/**
 * systemd-boot's EFI binary, when this host has one (scripts/setup.sh extracts it): then every
 * second VM boots with systemd-boot, as the lab's other machines alternate; otherwise all GRUB.
 */
async function sdBootBinary(): Promise<string | undefined> {
  for (const file of [
    resolve('.molt/tools/systemd-bootx64.efi'),
    '/usr/lib/systemd/boot/efi/systemd-bootx64.efi',
  ])
    if (
      await access(file).then(
        () => true,
        () => false,
      )
    )
      return file;
  return undefined;
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
interface VmPlace {
  readonly name: string;
  readonly index: number;
  readonly port: VmPort | undefined;
}

/**
 * The config's `network`: the bridge NIC's static address and, for nodes, the routes to the
 * other VMs' pods (their addresses on the bridge; docs/adr/0018).
 */
function bridgeNetwork(
  o: VmMachinesOptions,
  vm: VmPlace,
  all: readonly VmPlace[],
): MachineConfigInput['network'] {
  if (vm.port === undefined) return undefined;
  const addresses = all.map((v) => v.port?.address ?? '');
  const routes = o.kubernetes === undefined ? [] : podRoutes(addresses, vm.index);
  return { interfaces: [{ mac: vm.port.tap.mac, addresses: [`${vm.port.address}/24`], routes }] };
}

/** Write VM `vm.name`'s config, certificate and disk (`molt install`); resolves with the disk. */
async function installVm(
  o: VmMachinesOptions,
  vm: VmPlace,
  all: readonly VmPlace[],
  bootloader: { name: 'grub' | 'systemd-boot'; efi?: string },
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
  };
  const configFile = join(dir, 'config.yaml');
  await writePrivateFile(configFile, stringify(config));
  const disk = join(dir, 'disk.img');
  const [command = process.execPath, ...prefix] = o.molt;
  const args = [
    ...['install', '--disk', disk, '--image', o.image, '--config', configFile, '--pki', pki],
    ...['--slot-size', SlotSize, '--disk-size', DiskSize, '--insecure', '--work-dir', dir],
    ...(bootloader.efi === undefined ? [] : ['--efi-binary', bootloader.efi]),
    ...(node === undefined ? [] : ['--kubeconfig', node.kubeconfig]),
  ];
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

/** Wait for `v`'s agent to answer; an error carries the end of its console, where a boot says why. */
async function firstAnswer(pki: FleetPki, v: LabVm): Promise<void> {
  const off = new AbortController();
  void v.vm.exited.then(() => {
    off.abort();
  });
  try {
    await eventually(() => agentStatus(pki, v.record.endpoint), {
      timeoutMs: FirstBootMs,
      intervalMs: 2_000,
      signal: off.signal,
    });
  } catch (e) {
    const why = off.signal.aborted ? 'its QEMU exited' : String(e);
    const console = logTail(await readSerial(v.record.serialLog), 2000);
    throw new MoltError(
      ErrorCode.LabFailed,
      `VM ${v.record.name}'s agent did not answer at ${v.record.endpoint}: ${why}; its console ends:\n${console}`,
      { hint: `see its whole console: ${v.record.serialLog}`, cause: e },
    );
  }
}

/** Install, start and wait for `o.count` VMs (booting in parallel); stopped again on failure. */
export async function startVmMachines(o: VmMachinesOptions): Promise<VmMachines> {
  const sdboot = await sdBootBinary();
  const vms: LabVm[] = [];
  const places: VmPlace[] = [];
  const stop = async (): Promise<void> => {
    for (const v of vms) await v.vm.stop();
  };
  try {
    // Every VM's address first: each node's config routes to all the others' pods.
    for (let index = 1; index <= o.count; index++) {
      const name = `vm-${String(index)}`;
      places.push({ name, index, port: await o.vmPort?.(name) });
    }
    for (const vm of places) {
      const { name } = vm;
      const bootloader =
        vm.index % 2 === 0 && sdboot !== undefined
          ? { name: 'systemd-boot' as const, efi: sdboot }
          : { name: 'grub' as const };
      const t = performance.now();
      const disk = await installVm(o, vm, places, bootloader);
      o.log(
        `VMs: ${name} installed (${bootloader.name}, ${String(Math.round((performance.now() - t) / 1000))} s); powering on`,
      );
      vms.push(
        await startLabVm({
          labDir: o.labDir,
          name,
          disk,
          agentGuestPort: VmAgentPort,
          ...(vm.port !== undefined && { tap: vm.port.tap }),
          memoryMiB: o.memoryMiB ?? (o.kubernetes === undefined ? 1024 : NodeMemoryMiB),
        }),
      );
    }
    for (const v of vms) {
      const t = performance.now();
      await firstAnswer(o.pki, v);
      o.log(
        `VMs: ${v.record.name}'s agent answers at ${v.record.endpoint} (${String(Math.round((performance.now() - t) / 1000))} s more)`,
      );
    }
  } catch (e) {
    await stop();
    throw e;
  }
  const machine = (id: string, endpoint: string): LabMachineRecord => ({
    id,
    endpoint,
    role: 'worker',
    pool: VmPool,
    labels: {},
  });
  return {
    vms,
    machines: vms.map((v) => machine(v.record.name, v.record.endpoint)),
    onBridge: places.flatMap((p) =>
      p.port === undefined
        ? []
        : [machine(p.name, `https://${p.port.address}:${String(VmAgentPort)}`)],
    ),
    addresses: places.flatMap((p) => (p.port === undefined ? [] : [p.port.address])),
    stop,
  };
}
