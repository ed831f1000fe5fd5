// SPDX-License-Identifier: Apache-2.0
/**
 * What the `molt install` tests share: the real docker-registry with small installer images, a
 * machine config and PKI per bootloader, the systemd-boot EFI binary scripts/setup.sh extracts,
 * and the real tools that read a disk back (sfdisk, mtools, debugfs).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { MiB } from '../../src/core/disk/layout.ts';
import type { InstallOptions } from '../../src/image/install/install-disk.ts';
import { createRegistryClient, type OciRegistryClient } from '../../src/oci/index.ts';
import { createCa, issueCertificate } from '../../src/platform/pki/certificates.ts';
import type { MachineConfigInput } from '../../src/protocol/machine-config.ts';
import { pushInstallerImage, type InstallerImageSpec } from '../../src/testkit/installer-image.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

export const run = promisify(execFile);
export const repo = 'acme/os';
const repoRoot = join(import.meta.dirname, '../..');
export const moltBin = join(repoRoot, 'src/bin/molt.ts');

/** Small artifacts: the disk layout is what is tested, not a boot. */
export const smallImage = {
  vmlinuz: 64 * 1024,
  'initrd.img': 32 * 1024,
  'rootfs.img': 3 * MiB + 123,
  cmdline: new TextEncoder().encode('console=ttyS0 quiet'),
} as const;

/** Sizes that keep a test disk small (674 MiB, sparse). */
export const testSizes = { slot: 16 * MiB } as const;

/** systemd-bootx64.efi extracted by scripts/setup.sh (or scripts/qemu-setup.sh). */
export async function sdBootEfi(): Promise<string> {
  for (const path of [
    join(repoRoot, '.molt/tools/systemd-bootx64.efi'),
    join(repoRoot, '.molt/qemu/sdboot/usr/lib/systemd/boot/efi/systemd-bootx64.efi'),
    '/usr/lib/systemd/boot/efi/systemd-bootx64.efi',
  ])
    if (
      await access(path).then(
        () => true,
        () => false,
      )
    )
      return path;
  throw new Error('no systemd-bootx64.efi: run scripts/setup.sh');
}

export interface Fixture {
  readonly registry: RunningRegistry;
  readonly client: OciRegistryClient;
  readonly dir: string;
  /** Push an image under `tag`; its artifacts' bytes by name. */
  push(tag: string, spec?: InstallerImageSpec): Promise<Readonly<Record<string, Uint8Array>>>;
  /** Write config + PKI for `node` under dir/<node>; return the install options for them. */
  machine(
    node: string,
    bootloader: 'grub' | 'systemd-boot',
    extra?: Partial<MachineConfigInput>,
  ): Promise<Pick<InstallOptions, 'config' | 'pki' | 'bootloader'>>;
  /** The path of a CA certificate (PEM) on this host, as a cluster CA file. */
  ca(): Promise<string>;
  stop(): Promise<void>;
}

export async function startFixture(dir: string): Promise<Fixture> {
  const registry = await startRegistry();
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  const ca = await createCa();
  return {
    registry,
    client,
    dir,
    async push(tag, spec = { artifacts: smallImage }) {
      const pushed = await pushInstallerImage(client, repo, tag, { version: '1.0.0', ...spec });
      return pushed.artifacts;
    },
    async machine(node, bootloader, extra = {}) {
      const base = join(dir, node);
      const pki = join(base, 'pki');
      await mkdir(pki, { recursive: true });
      const pair = await issueCertificate({ ca, role: 'node', name: node });
      await writeFile(join(pki, 'ca.pem'), ca.cert);
      await writeFile(join(pki, `${node}.pem`), pair.cert);
      await writeFile(join(pki, `${node}.key`), pair.key, { mode: 0o600 });
      const config: MachineConfigInput = { node, role: 'worker', bootloader, ...extra };
      await writeFile(
        join(base, 'config.yaml'),
        `# ${node}, installed by the tests\n${stringify(config)}`,
      );
      return { config: join(base, 'config.yaml'), pki, bootloader };
    },
    async ca() {
      const file = join(dir, 'cluster-ca.crt');
      await writeFile(file, ca.cert);
      return file;
    },
    async stop() {
      await client.close();
      await registry.stop();
    },
  };
}

/** A control-plane machine's config sections (`node`'s etcd member, one component). */
export const controlPlaneOf = (
  node: string,
  pki?: { cluster: string; dir?: string },
  bootstrap?: { tokenFile?: string },
): Partial<MachineConfigInput> => ({
  role: 'control-plane',
  etcd: {
    name: node,
    peerUrl: 'https://10.231.0.11:2380',
    clientUrl: 'https://10.231.0.11:2379',
    initialCluster: `${node}=https://10.231.0.11:2380`,
    endpoints: ['https://10.231.0.11:2379'],
  },
  controlPlane: {
    binaries: '/usr/lib/molt/kube',
    components: { 'kube-apiserver': { port: 6443, args: ['--secure-port=6443'] } },
    ...(pki !== undefined && { pki }),
    ...(bootstrap !== undefined && { bootstrap }),
  },
});

export const sha256 = (bytes: Uint8Array): string =>
  `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

export async function fileHash(path: string): Promise<string> {
  return sha256(await readFile(path));
}

/** `sfdisk --json` of `disk`: the partitions. */
export async function partitions(
  disk: string,
): Promise<{ name: string; type: string; start: number; size: number }[]> {
  const { stdout } = await run('sfdisk', ['--json', disk]);
  return (JSON.parse(stdout) as { partitiontable: { partitions: [] } }).partitiontable.partitions;
}

export const mtoolsEnv = { ...process.env, MTOOLS_SKIP_CHECK: '1' };

/** `mtype` of a file on the FAT at `offset`. */
export async function fatFile(disk: string, offset: number, path: string): Promise<Buffer> {
  const { stdout } = await run('mtype', ['-i', `${disk}@@${String(offset)}`, `::${path}`], {
    env: mtoolsEnv,
    encoding: 'buffer',
    maxBuffer: 64 * MiB,
  });
  return stdout;
}

/** Copy `size` bytes at `offset` of `disk` to `out` (debugfs and grub-editenv read whole files). */
export async function extract(
  disk: string,
  offset: number,
  size: number,
  out: string,
): Promise<void> {
  await run('dd', [
    `if=${disk}`,
    `of=${out}`,
    'bs=1M',
    `skip=${String(offset / MiB)}`,
    `count=${String(Math.ceil(size / MiB))}`,
    'status=none',
  ]);
}

/** `debugfs -R CMD` on an ext4 image. */
export async function debugfs(image: string, command: string): Promise<string> {
  const { stdout } = await run('debugfs', ['-R', command, image], { maxBuffer: 16 * MiB });
  return stdout;
}
