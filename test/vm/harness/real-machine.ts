// SPDX-License-Identifier: Apache-2.0
/**
 * Real machines for the VM scenarios (docs/real-machines.md): a disk written by `molt install`
 * (the installer's own code), booted by OVMF and the real GRUB or systemd-boot under the product's
 * VM runner (src/lab/vm), the agent reached through its forwarded port with the `molt` CLI and an
 * admin certificate, as a person would. The registry is the real docker-registry on the host's
 * loopback; machines reach it at 10.0.2.2 through `registry.mirrors`.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { MiB } from '../../../src/core/disk/layout.ts';
import { installDisk } from '../../../src/image/install/install-disk.ts';
import { startVm, type Vm } from '../../../src/lab/vm/vm.ts';
import { createRegistryClient, type OciRegistryClient } from '../../../src/oci/index.ts';
import {
  createCa,
  issueCertificate,
  type PemPair,
} from '../../../src/platform/pki/certificates.ts';
import type { AgentStatus } from '../../../src/protocol/agent.ts';
import type { MachineConfigInput } from '../../../src/protocol/machine-config.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import { publish, type OsRelease } from './os-release.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../../..');
const moltBin = join(repoRoot, 'src/bin/molt.ts');
export const repository = 'molt/os';
/** The agent's port inside the guest (forwarded to a free port on the host's loopback). */
const AgentPort = 7443;
export const SlotBytes = 512 * MiB;

export type Bootloader = 'grub' | 'systemd-boot';

export interface Molt {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RealMachine {
  readonly name: string;
  readonly bootloader: Bootloader;
  readonly vm: Vm;
  readonly disk: string;
  readonly endpoint: string;
  /** `molt <args>` against this machine's agent with the admin certificate. */
  molt(args: readonly string[]): Promise<Molt>;
  /** `molt node status -o json`, retried until the agent answers or `deadlineMs` passes. */
  status(deadlineMs?: number): Promise<AgentStatus>;
  /** The status once no operation runs (a new slot checking its health, committing, rejoining). */
  settled(deadlineMs?: number): Promise<AgentStatus>;
  /**
   * Wait for the next `MOLT-BOOTED` marker after byte `from` of the console (of `slot`, when
   * given: a failed trial boots the other slot first); returns its slot, version and end offset.
   */
  booted(
    from: number,
    deadlineMs?: number,
    slot?: 'A' | 'B',
  ): Promise<{ slot: string; version: string; end: number }>;
}

export interface VmLab {
  readonly dir: string;
  readonly registry: RunningRegistry;
  readonly client: OciRegistryClient;
  /** Publish `release` as `tag`; the reference machines pull. */
  publish(tag: string, release: OsRelease): Promise<string>;
  /** Install `image` onto a new disk for `name` and power it on. */
  machine(name: string, bootloader: Bootloader, image: string): Promise<RealMachine>;
  stop(): Promise<void>;
}

/** systemd-bootx64.efi: the one scripts/setup.sh extracts. */
const sdBootEfi = join(repoRoot, '.molt/tools/systemd-bootx64.efi');

async function writePki(dir: string, ca: PemPair, node: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const pair = await issueCertificate({ ca, role: 'node', name: node, sans: ['127.0.0.1'] });
  await writeFile(join(dir, 'ca.pem'), ca.cert);
  await writeFile(join(dir, 'node.pem'), pair.cert);
  await writeFile(join(dir, 'node.key'), pair.key, { mode: 0o600 });
}

export async function startVmLab(dir: string): Promise<VmLab> {
  const registry = await startRegistry();
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  const ca = await createCa();
  const admin = await issueCertificate({ ca, role: 'admin', name: 'tester' });
  await mkdir(join(dir, 'admin'), { recursive: true });
  const adminFiles = {
    MOLT_CA: join(dir, 'admin', 'ca.pem'),
    MOLT_CERT: join(dir, 'admin', 'admin.pem'),
    MOLT_KEY: join(dir, 'admin', 'admin.key'),
  };
  await writeFile(adminFiles.MOLT_CA, ca.cert);
  await writeFile(adminFiles.MOLT_CERT, admin.cert);
  await writeFile(adminFiles.MOLT_KEY, admin.key, { mode: 0o600 });
  const registryPort = registry.host.split(':')[1] ?? '';
  const vms: Vm[] = [];

  async function machine(name: string, bootloader: Bootloader, image: string) {
    const base = join(dir, name);
    await writePki(join(base, 'pki'), ca, name);
    const config: MachineConfigInput = {
      node: name,
      role: 'worker',
      bootloader,
      api: { host: '0.0.0.0', port: AgentPort },
      healthDeadlineSeconds: 120,
      registry: { insecure: true, mirrors: { [registry.host]: `10.0.2.2:${registryPort}` } },
      disk: {},
    };
    await writeFile(join(base, 'config.yaml'), stringify(config));
    const disk = join(base, 'disk.img');
    await installDisk({
      disk,
      image,
      config: join(base, 'config.yaml'),
      pki: join(base, 'pki'),
      bootloader,
      sizes: { slot: SlotBytes },
      diskBytes: 2 * SlotBytes + 1024 * MiB,
      insecure: true,
      ...(bootloader === 'systemd-boot' && { efiBinary: sdBootEfi }),
      workDir: base,
    });
    const vm = await startVm({
      name,
      dir: join(base, 'vm'),
      disk,
      memoryMiB: 1024,
      forwards: [{ hostPort: 0, guestPort: AgentPort }],
    });
    vms.push(vm);
    const endpoint = `https://127.0.0.1:${String(vm.forwards[0]?.hostPort)}`;
    const molt = async (args: readonly string[]): Promise<Molt> => {
      try {
        const r = await run(process.execPath, [moltBin, ...args], {
          env: { ...process.env, ...adminFiles, MOLT_ENDPOINT: endpoint },
          maxBuffer: 16 * MiB,
          timeout: 15 * 60_000,
        });
        return { code: 0, stdout: r.stdout, stderr: r.stderr };
      } catch (e) {
        const x = e as { code?: number; stdout?: string; stderr?: string };
        return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
      }
    };
    const m: RealMachine = {
      name,
      bootloader,
      vm,
      disk,
      endpoint,
      molt,
      async status(deadlineMs = 120_000) {
        const until = Date.now() + deadlineMs;
        for (;;) {
          const r = await molt(['node', 'status', '-o', 'json', '--timeout', '5000']);
          if (r.code === 0) return JSON.parse(r.stdout) as AgentStatus;
          if (Date.now() > until)
            throw new Error(`${name}: the agent did not answer: ${r.stderr.trim()}`);
          await sleep(2_000); // a poll interval under a deadline: the agent is still starting
        }
      },
      async settled(deadlineMs = 600_000) {
        const until = Date.now() + deadlineMs;
        for (;;) {
          const s = await m.status();
          if (s.operation === null) return s;
          if (Date.now() > until)
            throw new Error(
              `${name}: still in ${s.operation.phase} after ${String(deadlineMs)} ms`,
            );
          await sleep(2_000); // a poll interval under a deadline: the operation is still running
        }
      },
      async booted(from, deadlineMs = 240_000, slot) {
        const pattern = new RegExp(`MOLT-BOOTED slot=(${slot ?? '\\S+'}) version=(\\S+)`);
        const m = await vm.waitFor(pattern, { deadlineMs, from });
        return { slot: m[1] ?? '', version: m[2] ?? '', end: m.index + m[0].length };
      },
    };
    return m;
  }

  return {
    dir,
    registry,
    client,
    publish: (tag, release) => publish(client, { host: registry.host, repository, tag }, release),
    machine,
    async stop() {
      for (const vm of vms) await vm.stop();
      await client.close();
      await registry.stop();
    },
  };
}
