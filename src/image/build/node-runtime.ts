// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes node runtime of an image (`--kubernetes-node DIR`): the kubelet, containerd and
 * its runc shim, ctr, crictl and the CNI plugins that `scripts/ensure-node-bins.sh` builds, laid
 * into the root with molt's units for them (deploy/image/kubernetes-node). The root is a read-only
 * squashfs and /var a tmpfs, so the units point every writable path at STATE or EPHEMERAL, and the
 * few directories the daemons create at start even when they exist are made here (see below).
 */
import { chmod, copyFile, mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { packageFile } from '../../platform/package-files.ts';
import { fileDigest, treeDigest } from './digest.ts';
import { nodeBinsHint } from './options.ts';
import { digestOf } from './recipe.ts';

export const NodeRuntimeFiles = packageFile('deploy', 'image', 'kubernetes-node');
/** `DIR/bin/*`, installed to /usr/local/bin. */
export const NodeBins = [
  'kubelet',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'crictl',
] as const;
/** `DIR/cni/*`, installed to /opt/cni/bin (containerd's CNI bin_dir). */
export const CniPlugins = ['bridge', 'host-local', 'loopback', 'portmap'] as const;
/** Units of deploy/image/kubernetes-node, enabled in an image with the node runtime. */
export const NodeRuntimeUnits = [
  'containerd.service',
  'molt-kube-pods.service',
  'kubelet.service',
] as const;
/**
 * Directories the daemons `mkdir -p` at start, which fails on a read-only root unless they exist:
 * containerd's opt plugin (`/opt/containerd/{bin,lib}`, a failed plugin is logged at every start)
 * and the kubelet's FlexVolume directory (the volume plugin prober logs an error otherwise). Both
 * stay empty.
 */
export const RuntimeDirs = [
  'opt/containerd/bin',
  'opt/containerd/lib',
  'usr/libexec/kubernetes/kubelet-plugins/volume/exec',
] as const;

/** `DIR/versions.json`, as scripts/ensure-node-bins.sh writes it. */
export interface NodeVersions {
  readonly kubernetes: string;
  readonly containerd: string;
  readonly cniPlugins: string;
  readonly crictl: string;
}

export interface NodeRuntime {
  readonly dir: string;
  readonly versions: NodeVersions;
  /** Digest of every binary and of versions.json: an input of the image. */
  readonly digest: string;
}

function bad(message: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, { hint: nodeBinsHint });
}

async function checkFile(dir: string, rel: string): Promise<string> {
  const path = join(dir, rel);
  if ((await stat(path).catch(() => null))?.isFile() !== true)
    throw bad(`--kubernetes-node ${dir} has no ${rel}`);
  return path;
}

function parseVersions(dir: string, text: string): NodeVersions {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad(`--kubernetes-node ${dir}: versions.json is not JSON`);
  }
  const v = (value ?? {}) as Record<string, unknown>;
  const versions: Partial<Record<keyof NodeVersions, string>> = {};
  for (const key of ['kubernetes', 'containerd', 'cniPlugins', 'crictl'] as const) {
    const field = v[key];
    if (typeof field !== 'string' || !/^v\d+\.\d+\.\d+\S*$/.test(field))
      throw bad(`--kubernetes-node ${dir}: versions.json has no version "${key}" (like v1.2.3)`);
    versions[key] = field;
  }
  return versions as NodeVersions;
}

/** Read and check `DIR` before anything is built: every file named, versions.json parsed. */
export async function readNodeRuntime(dir: string): Promise<NodeRuntime> {
  if ((await stat(dir).catch(() => null))?.isDirectory() !== true)
    throw bad(`--kubernetes-node ${dir} is not a directory`);
  const files: Record<string, string> = {};
  for (const rel of [...NodeBins.map((b) => `bin/${b}`), ...CniPlugins.map((p) => `cni/${p}`)])
    files[rel] = await checkFile(dir, rel);
  const versionsFile = await checkFile(dir, 'versions.json');
  const versions = parseVersions(dir, await readFile(versionsFile, 'utf8'));
  const digests: Record<string, string> = {};
  for (const [rel, path] of Object.entries(files)) digests[rel] = await fileDigest(path);
  digests['versions.json'] = await fileDigest(versionsFile);
  return {
    dir,
    versions,
    digest: digestOf({ files: digests, units: await treeDigest(NodeRuntimeFiles, 'node files') }),
  };
}

async function install(src: string, dest: string): Promise<void> {
  await copyFile(src, dest);
  await chmod(dest, 0o755);
}

/**
 * The runtime's binaries into `tree`, mode 0755 (root-owned: the build runs as root), and
 * {@link RuntimeDirs}; tree.ts lays the files of deploy/image/kubernetes-node over the root.
 */
export async function installNodeBinaries(tree: string, runtime: NodeRuntime): Promise<void> {
  const bin = join(tree, 'usr', 'local', 'bin');
  const cni = join(tree, 'opt', 'cni', 'bin');
  await mkdir(bin, { recursive: true });
  await mkdir(cni, { recursive: true });
  for (const name of NodeBins) await install(join(runtime.dir, 'bin', name), join(bin, name));
  for (const name of CniPlugins) await install(join(runtime.dir, 'cni', name), join(cni, name));
  for (const dir of RuntimeDirs) await mkdir(join(tree, dir), { recursive: true, mode: 0o755 });
}

/** image.json's `kubernetesNode`: the versions the release's labels carry. */
export interface NodeRuntimeSummary {
  readonly kubelet: string;
  readonly containerd: string;
  readonly cniPlugins: string;
  readonly crictl: string;
}

export const nodeRuntimeSummary = (v: NodeVersions): NodeRuntimeSummary => ({
  kubelet: v.kubernetes,
  containerd: v.containerd,
  cniPlugins: v.cniPlugins,
  crictl: v.crictl,
});
