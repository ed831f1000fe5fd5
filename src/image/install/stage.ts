// SPDX-License-Identifier: Apache-2.0
/**
 * The machine as it will be, built in a temporary machine root before the disk is touched: the
 * agent's own first install (`installFirstSlot`: pull slot A, check it staged, write, verify, boot
 * entry, ready, commit — the order of an upgrade) with the real GRUB or systemd-boot back-end,
 * then STATE as the machine mounts it (`config.yaml`, `pki/`, `journal/`, `network/`, `hostname`, and
 * `slots/a/` — on a real machine `/molt/slots` is a symlink to `state/slots`,
 * docs/real-machines.md §2) and the bootloader binary at the removable path. The writer then lays this tree onto the partitions.
 */
import { access, chmod, copyFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { installFirstSlot } from '../../agent/install.ts';
import { NodeDir, type NodeFiles } from '../../agent/kubernetes-node/files.ts';
import type { ImageSizes } from '../../core/disk/fit.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { artifactPath } from '../../core/slots/layout.ts';
import type { SlotManifest } from '../../core/slots/slot.ts';
import { writePrivateFile } from '../../platform/fs/private-file.ts';
import type { MachineConfig } from '../../protocol/machine-config.ts';
import { prepareEfiBinary } from './efi-binary.ts';
import type { ClusterPki } from './cluster-pki.ts';
import type { MachinePki } from './inputs.ts';
import { NetworkDir, networkdFiles } from './networkd.ts';

/** Where the machine's STATE is mounted; a public key under it is carried onto STATE. */
const StateMount = '/molt/state/';

export interface StageOptions {
  /** An empty directory: the temporary machine root. */
  readonly root: string;
  readonly config: MachineConfig;
  readonly configText: string;
  readonly pki: MachinePki;
  /** A real Kubernetes node's files, for `kubernetes/node/` on STATE. */
  readonly nodeFiles?: NodeFiles | undefined;
  /** The agent's kubeconfig and where on the machine it goes (under /molt/state/). */
  readonly kubeconfig?: { readonly path: string; readonly text: string } | undefined;
  /** A control-plane machine's cluster PKI, for `controlPlane.pki.dir` on STATE. */
  readonly clusterPki?: ClusterPki | undefined;
  readonly image: string;
  readonly insecure: boolean;
  /** The key to check the image's signature with here (the config's `publicKeyFile` names the machine's). */
  readonly publicKey?: string;
  readonly efiBinary?: string;
}

export interface StagedMachine {
  readonly root: string;
  readonly manifest: SlotManifest;
  readonly sizes: ImageSizes;
  readonly efiBytes: number;
  /** Directories laid onto the ESP and STATE, and the file written into slot A. */
  readonly espDir: string;
  readonly stateDir: string;
  readonly rootfs: string;
}

async function publicKeyFor(options: StageOptions): Promise<string | undefined> {
  const key = options.publicKey ?? options.config.publicKeyFile;
  if (key === undefined) return undefined;
  await access(key).catch((error: unknown) => {
    throw new MoltError(ErrorCode.PublicKeyInvalid, `cannot read the public key ${key}`, {
      hint:
        options.publicKey === undefined
          ? "the config's publicKeyFile is a path on the machine; pass the same key here with --public-key FILE"
          : 'check the --public-key path',
      cause: error,
    });
  });
  return key;
}

async function artifactSize(
  root: string,
  m: SlotManifest,
  name: 'vmlinuz' | 'initrd.img' | 'rootfs.img',
) {
  if (m.artifacts[name] === undefined) return undefined;
  return (await stat(join(root, artifactPath('A', name)))).size;
}

async function writeState(
  options: StageOptions,
  stateDir: string,
  key: string | undefined,
): Promise<void> {
  const { root, pki, config } = options;
  await mkdir(join(stateDir, 'pki'), { recursive: true, mode: 0o700 });
  await mkdir(join(stateDir, 'journal'), { recursive: true, mode: 0o700 });
  await mkdir(join(stateDir, 'slots', 'a'), { recursive: true });
  await writePrivateFile(join(stateDir, 'config.yaml'), options.configText);
  await writePrivateFile(join(stateDir, 'pki', 'node.key'), pki.key);
  await copyText(join(stateDir, 'pki', 'ca.pem'), pki.ca);
  await copyText(join(stateDir, 'pki', 'node.pem'), pki.cert);
  for (const name of ['slot.json', 'cmdline']) {
    const from = join(root, 'slots', 'a', name);
    if (await exists(from)) await copyFile(from, join(stateDir, 'slots', 'a', name));
  }
  await writeNetworkFiles(join(stateDir, NetworkDir.slice(StateMount.length)), config);
  // The image's unit molt-hostname.service makes it the machine's hostname at boot.
  if (isHostname(config.node)) await copyText(join(stateDir, 'hostname'), `${config.node}\n`);
  if (options.nodeFiles !== undefined)
    await writeNodeFiles(join(stateDir, NodeDir.slice(StateMount.length)), options.nodeFiles);
  if (options.kubeconfig !== undefined) {
    const to = join(stateDir, options.kubeconfig.path.slice(StateMount.length));
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    await writePrivateFile(to, options.kubeconfig.text);
  }
  if (options.clusterPki !== undefined) await writeClusterPki(stateDir, options.clusterPki);
  const machineKey = config.publicKeyFile;
  if (key !== undefined && machineKey?.startsWith(StateMount) === true) {
    const to = join(stateDir, machineKey.slice(StateMount.length));
    await mkdir(dirname(to), { recursive: true });
    await copyFile(key, to);
  }
}

/** The cluster PKI: keys and kubeconfigs 0600, certificates 0644, every directory 0700. */
async function writeClusterPki(stateDir: string, pki: ClusterPki): Promise<void> {
  const dir = join(stateDir, pki.dir.slice(StateMount.length));
  for (const file of pki.files) {
    const to = join(dir, file.path);
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    if (file.private) await writePrivateFile(to, file.content);
    else await writeFile(to, file.content, { mode: 0o644 });
  }
}

/** networkd's files for the config's `network`, when it has one (they hold no secret: 0644). */
async function writeNetworkFiles(dir: string, config: MachineConfig): Promise<void> {
  const files = Object.entries(networkdFiles(config.network));
  if (files.length === 0) return;
  await mkdir(dir, { recursive: true });
  for (const [name, content] of files) await copyText(join(dir, name), content);
}

/** Each file with its own mode (the bootstrap token 0600), and the kubelet's static pod directory. */
async function writeNodeFiles(dir: string, files: NodeFiles): Promise<void> {
  await mkdir(join(dir, 'manifests'), { recursive: true });
  for (const [name, file] of Object.entries(files)) {
    const to = join(dir, name);
    await mkdir(dirname(to), { recursive: true });
    await writeFile(to, file.content, { mode: file.mode });
    await chmod(to, file.mode); // whatever this host's umask took away
  }
}

/** A name the kernel and resolvers take as a hostname (RFC 1123 labels, at most 64 characters). */
export const isHostname = (name: string): boolean =>
  name.length <= 64 &&
  name.split('.').every((l) => /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/i.test(l));

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** Certificates are public: 0644, as `molt pki` writes them. */
async function copyText(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o644 });
}

/** Pull, check and lay out the machine under `options.root`. */
export async function stageMachine(options: StageOptions): Promise<StagedMachine> {
  const { root, config } = options;
  const key = await publicKeyFor(options);
  // The pull runs on this host: the machine's mirrors (a VM's 10.0.2.2) mean nothing here.
  const here: MachineConfig = {
    ...config,
    registry: {
      ...config.registry,
      insecure: config.registry.insecure || options.insecure,
      mirrors: {},
    },
    ...(key === undefined ? {} : { publicKeyFile: key }),
  };
  const espDir = join(root, 'esp');
  const efi = join(espDir, 'EFI', 'BOOT', 'BOOTX64.EFI');
  await mkdir(dirname(efi), { recursive: true });
  const efiBytes = await prepareEfiBinary(config.bootloader, efi, options.efiBinary);
  await installFirstSlot(root, here, options.image);
  const manifest = JSON.parse(
    await readFile(join(root, 'slots', 'a', 'slot.json'), 'utf8'),
  ) as SlotManifest;
  const stateDir = join(root, 'state');
  await writeState(options, stateDir, key);
  return {
    root,
    manifest,
    sizes: {
      kernel: await artifactSize(root, manifest, 'vmlinuz'),
      initrd: await artifactSize(root, manifest, 'initrd.img'),
      rootfs: await artifactSize(root, manifest, 'rootfs.img'),
    },
    efiBytes,
    espDir,
    stateDir,
    rootfs: join(root, artifactPath('A', 'rootfs.img')),
  };
}
