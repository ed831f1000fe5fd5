// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes control plane of an image (`--kubernetes-control-plane DIR`, docs/adr/0018 §3):
 * kube-apiserver, kube-controller-manager and kube-scheduler where a control-plane machine's
 * config finds them before any apply (`controlPlane.binaries: /usr/lib/molt/kubernetes/bin`), and
 * etcd, etcdutl and kubectl in /usr/local/bin — the directory `scripts/ensure-kube-bins.sh`
 * prints holds all six. etcd runs as Debian's `etcd.service` (the base gets `etcd-server` for its
 * unit and its `etcd` user: a read-only root cannot add users at boot), with molt's drop-in
 * pointing it at this etcd and the agent's environment file. The unit is not enabled: the agent
 * starts etcd once it has written the member's environment, and a unit failing at boot for want of
 * that file would mark the system degraded, which fails the boot's health check.
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { etcdUnitDropIn } from '../../agent/adapters/systemd-units/etcd-unit.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { fileDigest } from './digest.ts';
import { digestOf } from './recipe.ts';

const run = promisify(execFile);

/** Where the components' binaries go (a control-plane config's `controlPlane.binaries`). */
export const ControlPlaneBinDir = '/usr/lib/molt/kubernetes/bin';
export const ComponentBins = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
] as const;
/** Installed to /usr/local/bin. */
export const ToolBins = ['etcd', 'etcdutl', 'kubectl'] as const;
/** The machine root and EPHEMERAL's etcd directory, as the agent on a disk machine has them. */
const MachineRoot = '/molt';
const EtcdDataDir = '/molt/ephemeral/etcd';

export const controlPlaneBinsHint =
  'give the directory `bash scripts/ensure-kube-bins.sh` prints (it builds the binaries)';

export interface ControlPlaneVersions {
  readonly kubernetes: string;
  readonly etcd: string;
}

export interface ControlPlaneRuntime {
  readonly dir: string;
  readonly versions: ControlPlaneVersions;
  /** Digest of every binary and of the drop-in: an input of the image. */
  readonly digest: string;
}

function bad(message: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, { hint: controlPlaneBinsHint });
}

/** `Kubernetes v1.35.4` / `etcd Version: 3.5.35`: the binary says its own version. */
async function versionOf(dir: string, bin: string, pattern: RegExp): Promise<string> {
  const { stdout } = await run(join(dir, bin), ['--version'], { timeout: 30_000 }).catch(
    (e: unknown) => {
      throw bad(`--kubernetes-control-plane ${dir}: ${bin} --version failed: ${String(e)}`);
    },
  );
  const m = pattern.exec(stdout);
  if (m?.[1] === undefined)
    throw bad(`--kubernetes-control-plane ${dir}: ${bin} --version printed no version`);
  return m[1];
}

/** Read and check `DIR` before anything is built: every binary there, their versions known. */
export async function readControlPlaneRuntime(dir: string): Promise<ControlPlaneRuntime> {
  if ((await stat(dir).catch(() => null))?.isDirectory() !== true)
    throw bad(`--kubernetes-control-plane ${dir} is not a directory`);
  const digests: Record<string, string> = {};
  for (const bin of [...ComponentBins, ...ToolBins]) {
    const path = join(dir, bin);
    if ((await stat(path).catch(() => null))?.isFile() !== true)
      throw bad(`--kubernetes-control-plane ${dir} has no ${bin}`);
    digests[bin] = await fileDigest(path);
  }
  const versions = {
    kubernetes: await versionOf(dir, 'kube-apiserver', /^Kubernetes (v\d+\.\d+\.\d+\S*)/m),
    etcd: `v${await versionOf(dir, 'etcd', /^etcd Version: (\d+\.\d+\.\d+\S*)/m)}`,
  };
  return { dir, versions, digest: digestOf({ files: digests, dropIn: etcdDropIn() }) };
}

const etcdDropIn = (): string =>
  etcdUnitDropIn(MachineRoot, EtcdDataDir, join('/usr/local/bin', 'etcd'));

async function install(src: string, dest: string): Promise<void> {
  await copyFile(src, dest);
  await chmod(dest, 0o755);
}

/** The binaries into `tree` (0755), etcd's drop-in, and etcd.service left to the agent to start. */
export async function installControlPlane(tree: string, rt: ControlPlaneRuntime): Promise<void> {
  const components = join(tree, ControlPlaneBinDir);
  const tools = join(tree, 'usr', 'local', 'bin');
  await mkdir(components, { recursive: true });
  await mkdir(tools, { recursive: true });
  for (const bin of ComponentBins) await install(join(rt.dir, bin), join(components, bin));
  for (const bin of ToolBins) await install(join(rt.dir, bin), join(tools, bin));
  const dropIns = join(tree, 'etc', 'systemd', 'system', 'etcd.service.d');
  await mkdir(dropIns, { recursive: true });
  await writeFile(join(dropIns, 'molt.conf'), etcdDropIn(), { mode: 0o644 });
  // etcd-server's postinst enabled it: the agent starts it instead (see above).
  await rm(join(tree, 'etc', 'systemd', 'system', 'multi-user.target.wants', 'etcd.service'), {
    force: true,
  });
}
