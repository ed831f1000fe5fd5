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
import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { eventually } from '../../platform/process/managed-process.ts';
import type { LabMachineRecord } from '../fleet/fleet.ts';
import { agentStatus, type FleetPki } from '../fleet/machine.ts';
import type { VmPort } from '../fleet/network.ts';
import { startLabVm, type LabVm } from './lab-vm.ts';
import { logTail, readSerial } from './serial-log.ts';
import { VmClusterName, type VmCluster } from './vm-cluster.ts';
import {
  ControlPlaneMemoryMiB,
  installVm,
  isControlPlaneVm,
  NodeMemoryMiB,
  VmAgentPort,
  type VmPlace,
} from './vm-install.ts';
import type { VmKubernetes } from './vm-node.ts';

export type { VmKubernetes } from './vm-node.ts';
export { NodeMemoryMiB, VmAgentPort } from './vm-install.ts';

/** The pool the lab's VMs are in, and the channel it follows. */
export const VmPool = 'vms';
export const VmChannel = 'vm';
/** The pool of the control-plane VMs of a cluster on VMs (`--vm-control-planes`). */
export const VmControlPlanePool = 'vm-control-plane';
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
  /** @default 1024, {@link NodeMemoryMiB} for nodes, {@link ControlPlaneMemoryMiB} for control planes */
  readonly memoryMiB?: number;
  /** Where each VM goes (see {@link placeVms}). @default `count` workers `vm-1`… */
  readonly places?: readonly VmPlace[];
  /** The lab's cluster on control-plane VMs, when it has one: `places` names them too. */
  readonly cluster?: VmCluster;
  /** Make each VM a real node of this cluster (TLS bootstrap with `bootstrapToken`). */
  readonly kubernetes?: VmKubernetes;
  /**
   * Each VM's port on the lab bridge (netns labs): its name to its tap and address. Without one,
   * a VM has QEMU's user network only.
   */
  readonly vmPort?: (name: string) => Promise<VmPort | undefined>;
  /**
   * Boot these VMs first, and the others only once `afterFirst` resolved (a cluster's control
   * planes, then its API up, then the workers): under TCG every VM booting at once slows the
   * first control plane's start several times over. @default every VM at once
   */
  readonly first?: { readonly names: readonly string[]; readonly then: () => Promise<void> };
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

/** The names of `count` worker VMs. */
export const workerVmNames = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => `vm-${String(i + 1)}`);

/** Each named VM's index (1-based, in order) and port on the lab bridge, if it has one. */
export async function placeVms(
  names: readonly string[],
  vmPort: VmMachinesOptions['vmPort'],
): Promise<VmPlace[]> {
  const places: VmPlace[] = [];
  for (const [i, name] of names.entries())
    places.push({ name, index: i + 1, port: await vmPort?.(name) });
  return places;
}

/** Install and power on the VMs of `group` (the disks in turn), then wait for each agent. */
async function bootGroup(
  o: VmMachinesOptions,
  group: readonly VmPlace[],
  all: { readonly places: readonly VmPlace[]; readonly vms: LabVm[]; readonly sdboot?: string },
): Promise<void> {
  const started: LabVm[] = [];
  for (const vm of group) {
    const { name } = vm;
    const bootloader =
      vm.index % 2 === 0 && all.sdboot !== undefined
        ? { name: 'systemd-boot' as const, efi: all.sdboot }
        : { name: 'grub' as const };
    const t = performance.now();
    const disk = await installVm(o, vm, all.places, bootloader);
    o.log(
      `VMs: ${name} installed (${bootloader.name}, ${String(Math.round((performance.now() - t) / 1000))} s); powering on`,
    );
    const v = await startLabVm({
      labDir: o.labDir,
      name,
      disk,
      agentGuestPort: VmAgentPort,
      ...(vm.port !== undefined && { tap: vm.port.tap }),
      memoryMiB:
        o.memoryMiB ??
        (isControlPlaneVm(o, name)
          ? ControlPlaneMemoryMiB
          : o.kubernetes === undefined
            ? 1024
            : NodeMemoryMiB),
    });
    all.vms.push(v);
    started.push(v);
  }
  for (const v of started) {
    const t = performance.now();
    await firstAnswer(o.pki, v);
    o.log(
      `VMs: ${v.record.name}'s agent answers at ${v.record.endpoint} (${String(Math.round((performance.now() - t) / 1000))} s more)`,
    );
  }
}

/**
 * Install, start and wait for `o.count` VMs (booting in parallel, or `o.first` before the rest);
 * stopped again on failure.
 */
export async function startVmMachines(o: VmMachinesOptions): Promise<VmMachines> {
  const sdboot = await sdBootBinary();
  const vms: LabVm[] = [];
  const places: VmPlace[] = [];
  const stop = async (): Promise<void> => {
    for (const v of vms) await v.vm.stop();
  };
  try {
    // Every VM's address first: each node's config routes to all the others' pods.
    places.push(...(o.places ?? (await placeVms(workerVmNames(o.count), o.vmPort))));
    const all = { places, vms, ...(sdboot !== undefined && { sdboot }) };
    const first = places.filter((p) => o.first?.names.includes(p.name) ?? true);
    await bootGroup(o, first, all);
    const rest = places.filter((p) => !first.includes(p));
    if (o.first !== undefined) await o.first.then();
    if (rest.length > 0) await bootGroup(o, rest, all);
  } catch (e) {
    await stop();
    throw e;
  }
  // The workers of a cluster on VMs are its nodes: in its cluster, so its control plane goes first.
  const cluster = o.cluster === undefined ? {} : { cluster: VmClusterName };
  const machine = (id: string, endpoint: string): LabMachineRecord =>
    isControlPlaneVm(o, id)
      ? { id, endpoint, role: 'control-plane', pool: VmControlPlanePool, ...cluster, labels: {} }
      : { id, endpoint, role: 'worker', pool: VmPool, ...cluster, labels: {} };
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
