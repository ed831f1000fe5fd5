// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's VM machines (`molt lab up --vms N`, docs/adr/0007): each a disk written by
 * `molt install` (run as a child process, the installer's own code) under `<lab>/vms/<name>/`,
 * booted by OVMF and the real bootloader under the VM runner, its agent reached at a port
 * forwarded to 127.0.0.1 — the endpoint the operator's fleet file names. VMs are not Kubernetes
 * nodes (their config has no `kubernetes:`), and not part of the lab cluster: their pool `vms`
 * has its own channel and policies.
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
import { labVmDir, startLabVm, type LabVm } from './lab-vm.ts';

const run = promisify(execFile);

/** The agent's port inside the guest. */
export const VmAgentPort = 7443;
/** The pool the lab's VMs are in, and the channel it follows. */
export const VmPool = 'vms';
export const VmChannel = 'vm';
/** Each slot partition: the 1.x images' squashfs is ~150 MB. */
const SlotSize = '512M';
const DiskSize = '2G';
/** TCG boots slowly: a new slot has two minutes to become healthy. */
const HealthDeadlineSeconds = 120;
/** How long an install plus a first boot may take under TCG (~60 s measured). */
const FirstBootMs = 6 * 60_000;

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
  /** @default 1024 */
  readonly memoryMiB?: number;
  readonly log: (line: string) => void;
}

export interface VmMachines {
  readonly vms: readonly LabVm[];
  /** The VMs as the fleet file lists them (pool `vms`). */
  readonly machines: readonly LabMachineRecord[];
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
  const [host, port] = registry.split(':');
  return host === '127.0.0.1' || host === 'localhost'
    ? { [registry]: `10.0.2.2${port === undefined ? '' : `:${port}`}` }
    : {};
}

/** Write VM `name`'s config, certificate and disk (`molt install`); resolves with the disk. */
async function installVm(
  o: VmMachinesOptions,
  name: string,
  bootloader: { name: 'grub' | 'systemd-boot'; efi?: string },
): Promise<string> {
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
    sans: ['127.0.0.1'],
    days: 30,
  });
  const config: MachineConfigInput = {
    node: name,
    role: 'worker',
    bootloader: bootloader.name,
    api: { host: '0.0.0.0', port: VmAgentPort },
    healthDeadlineSeconds: HealthDeadlineSeconds,
    registry: { insecure: true, mirrors: mirrors(o.registry) },
    disk: {},
  };
  const configFile = join(dir, 'config.yaml');
  await writePrivateFile(configFile, stringify(config));
  const disk = join(dir, 'disk.img');
  const [command = process.execPath, ...prefix] = o.molt;
  const args = [
    ...['install', '--disk', disk, '--image', o.image, '--config', configFile, '--pki', pki],
    ...['--slot-size', SlotSize, '--disk-size', DiskSize, '--insecure', '--work-dir', dir],
    ...(bootloader.efi === undefined ? [] : ['--efi-binary', bootloader.efi]),
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

/** Install, start and wait for `o.count` VMs (booting in parallel); stopped again on failure. */
export async function startVmMachines(o: VmMachinesOptions): Promise<VmMachines> {
  const sdboot = await sdBootBinary();
  const vms: LabVm[] = [];
  const stop = async (): Promise<void> => {
    for (const v of vms) await v.vm.stop();
  };
  try {
    for (let i = 1; i <= o.count; i++) {
      const name = `vm-${String(i)}`;
      const bootloader =
        i % 2 === 0 && sdboot !== undefined
          ? { name: 'systemd-boot' as const, efi: sdboot }
          : { name: 'grub' as const };
      const t = performance.now();
      const disk = await installVm(o, name, bootloader);
      o.log(
        `VMs: ${name} installed (${bootloader.name}, ${String(Math.round((performance.now() - t) / 1000))} s); powering on`,
      );
      vms.push(
        await startLabVm({
          labDir: o.labDir,
          name,
          disk,
          agentGuestPort: VmAgentPort,
          memoryMiB: o.memoryMiB ?? 1024,
        }),
      );
    }
    for (const v of vms) {
      const t = performance.now();
      await eventually(() => agentStatus(o.pki, v.record.endpoint), {
        timeoutMs: FirstBootMs,
        intervalMs: 2_000,
      }).catch((e: unknown) => {
        throw new MoltError(
          ErrorCode.LabFailed,
          `VM ${v.record.name}'s agent did not answer at ${v.record.endpoint}: ${String(e)}`,
          { hint: `see its console: ${v.record.serialLog}`, cause: e },
        );
      });
      o.log(
        `VMs: ${v.record.name}'s agent answers at ${v.record.endpoint} (${String(Math.round((performance.now() - t) / 1000))} s more)`,
      );
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    vms,
    machines: vms.map((v) => ({
      id: v.record.name,
      endpoint: v.record.endpoint,
      role: 'worker' as const,
      pool: VmPool,
      labels: {},
    })),
    stop,
  };
}
