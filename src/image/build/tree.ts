// SPDX-License-Identifier: Apache-2.0
/**
 * The image's root tree, laid out in a scratch directory: the cached base, molt's files for the
 * image (deploy/image/rootfs: fstab, units, networkd, system.conf.d), molt with its dependencies,
 * Node 24, the machine root of docs/real-machines.md §2, the release version in os-release, the
 * Kubernetes node runtime when asked (node-runtime.ts), the user's overlays in order, and the
 * units enabled. Files are copied in as root-owned, and never
 * through a directory symlink of the base (`/lib` → `usr/lib` stays a symlink).
 */
import { chmod, copyFile, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageFile } from '../../platform/package-files.ts';
import type { Base } from './base.ts';
import { MoltDir, type MoltPackage } from './molt-package.ts';
import type { NodeBinary } from './node-binary.ts';
import { installControlPlane, type ControlPlaneRuntime } from './control-plane-runtime.ts';
import {
  installNodeBinaries,
  NodeRuntimeFiles,
  NodeRuntimeUnits,
  type NodeRuntime,
} from './node-runtime.ts';
import { runPipe, runTool, type RunOptions } from './tools.ts';

export const RootfsFiles = packageFile('deploy', 'image', 'rootfs');
/** Units of deploy/image/rootfs that every image enables. */
export const MoltUnits = [
  'molt-agent.service',
  'molt-booted.service',
  'molt-emergency-reboot.service',
  'molt-network.service',
  'molt-hostname.service',
] as const;

export interface TreeInputs {
  readonly base: Base;
  readonly molt: MoltPackage;
  readonly node: NodeBinary;
  readonly version: string;
  readonly overlays: readonly string[];
  readonly enable: readonly string[];
  /** The Kubernetes node runtime (`--kubernetes-node`), when the image carries one. */
  readonly kubernetesNode?: NodeRuntime;
  /** etcd and the control-plane binaries (`--kubernetes-control-plane`). */
  readonly controlPlane?: ControlPlaneRuntime;
}

/** Copy `src`'s content over `dest`: root-owned, existing directories (and symlinks to them) kept. */
export function copyInto(src: string, dest: string, o: RunOptions): Promise<void> {
  return runPipe(
    ['tar', ['-C', src, '-cf', '-', '.']],
    [
      'tar',
      ['-C', dest, '-xf', '-', '--keep-directory-symlink', '--no-same-owner', '--no-overwrite-dir'],
    ],
    o,
  );
}

/** os-release with the release named: `IMAGE_ID=molt`, `IMAGE_VERSION=<version>` (os-release(5)). */
export function withImageVersion(osRelease: string, version: string): string {
  const kept = osRelease.split('\n').filter((l) => l !== '' && !/^IMAGE_(ID|VERSION)=/.test(l));
  return `${[...kept, 'IMAGE_ID=molt', `IMAGE_VERSION=${version}`].join('\n')}\n`;
}

const moltWrapper = `#!/bin/sh
# molt's CLI in the image (the agent runs as molt-agent.service).
exec /usr/local/bin/node /${MoltDir}/dist/bin/molt.js "$@"
`;

/** Lay the root tree out in `tree` (an empty directory). */
export async function assembleTree(tree: string, i: TreeInputs, log: RunOptions): Promise<void> {
  const step = (name: string): RunOptions => ({ ...log, step: name });
  await runTool(
    'tar',
    ['--xattrs', '--xattrs-include=*', '--numeric-owner', '-xpf', i.base.tar, '-C', tree],
    step('root tree (base)'),
  );
  await copyInto(RootfsFiles, tree, step('root tree (molt files)'));
  await mkdir(join(tree, MoltDir), { recursive: true });
  await copyInto(i.molt.dir, join(tree, MoltDir), step('root tree (molt)'));
  const bin = join(tree, 'usr', 'local', 'bin');
  await mkdir(bin, { recursive: true });
  await copyFile(i.node.path, join(bin, 'node'));
  await chmod(join(bin, 'node'), 0o755);
  await writeFile(join(bin, 'molt'), moltWrapper, { mode: 0o755 });
  // The machine root (docs/real-machines.md §2): mount points and two symlinks.
  for (const d of ['esp', 'state', 'ephemeral'])
    await mkdir(join(tree, 'molt', d), { recursive: true });
  await symlink('state/slots', join(tree, 'molt', 'slots'));
  await symlink('/run/molt', join(tree, 'molt', 'run'));
  // The ESP is molt's, at /molt/esp: systemd must not also automount it on /boot.
  const generators = join(tree, 'etc', 'systemd', 'system-generators');
  await mkdir(generators, { recursive: true });
  await symlink('/dev/null', join(generators, 'systemd-gpt-auto-generator'));
  const osRelease = join(tree, 'usr', 'lib', 'os-release');
  await writeFile(osRelease, withImageVersion(await readFile(osRelease, 'utf8'), i.version));
  if (i.kubernetesNode !== undefined) {
    await installNodeBinaries(tree, i.kubernetesNode);
    await copyInto(NodeRuntimeFiles, tree, step('root tree (kubernetes node files)'));
  }
  if (i.controlPlane !== undefined) await installControlPlane(tree, i.controlPlane);
  for (const overlay of i.overlays) await copyInto(overlay, tree, step(`overlay ${overlay}`));
  await runTool(
    'chroot',
    [
      tree,
      'systemctl',
      'enable',
      '--quiet',
      ...MoltUnits,
      ...(i.kubernetesNode === undefined ? [] : NodeRuntimeUnits),
      ...i.enable,
    ],
    step('enable units (systemctl)'),
  );
}
