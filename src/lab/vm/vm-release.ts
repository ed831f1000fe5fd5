// SPDX-License-Identifier: Apache-2.0
/**
 * OS releases for the lab's VMs (docs/real-machines.md §3): built by `molt image build`, run as a
 * child process of the molt the lab runs (so the image's agent is that molt, and the lab does not
 * import the image builder: STYLE §2), cached by content under `.molt/images` (a warm build
 * takes seconds), and read back as the installer artifacts the lab publishes.
 *
 * A `broken` release (`molt lab publish --vm --broken`, the demo's fallback) is the same build
 * with {@link PanicArgument} appended to its kernel command line: `rdinit=` names an init the
 * initramfs does not have, so the real kernel cannot mount its root and panics, and the real
 * bootloader falls back — a broken release as one really happens, not a simulated one.
 *
 * A release whose kubelet cannot start (`--broken-kubelet`, a node runtime's fallback) boots
 * fine, but carries the systemd drop-in of {@link writeBrokenKubeletOverlay} (through
 * `molt image build --overlay`): the kubelet exits at once on an unknown flag, and systemd keeps
 * restarting it, as after a kubelet upgrade whose flags the new version removed. The node never
 * reports this boot Ready, so the agent's health check fails at its deadline and the machine falls
 * back by itself.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { imageLabels } from '../../protocol/image-json.ts';

/** What a broken VM release appends to the image's kernel command line. */
export const PanicArgument = 'rdinit=/molt-lab-no-init';

/** The flag no kubelet knows, which a broken-kubelet release's kubelet is started with. */
export const BrokenKubeletFlag = '--molt-lab-no-such-flag';

/** Where in the root the broken-kubelet drop-in lies (beside the node runtime's kubelet.service). */
export const BrokenKubeletDropIn =
  'usr/lib/systemd/system/kubelet.service.d/50-molt-lab-broken.conf';

/**
 * The drop-in replaces the unit's command line: kubelet.env sets `KUBELET_ARGS` and an
 * `EnvironmentFile=` overrides any `Environment=`, so only a new `ExecStart=` is sure to pass the
 * flag. The kubelet parses its flags before anything else and exits on the unknown one.
 */
const brokenKubeletUnit = `# molt lab publish --broken-kubelet: a kubelet that cannot start (it exits on an unknown flag).
[Service]
ExecStart=
ExecStart=/usr/local/bin/kubelet ${BrokenKubeletFlag} $KUBELET_ARGS
`;

/** Write the broken-kubelet overlay into `dir` (made if missing); resolves with `dir`. */
export async function writeBrokenKubeletOverlay(dir: string): Promise<string> {
  const file = join(dir, BrokenKubeletDropIn);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, brokenKubeletUnit, { mode: 0o644 });
  return dir;
}

const ArtifactFiles = ['vmlinuz', 'initrd.img', 'rootfs.img'] as const;

export interface VmReleaseOptions {
  /** The argv that starts molt (`[node, …/bin/molt.js]`). */
  readonly molt: readonly string[];
  readonly version: string;
  /** `molt image build --out`: where the artifacts are copied from the cache. */
  readonly out: string;
  /** A kernel that panics at boot (see the file comment). */
  readonly broken?: boolean;
  /**
   * The node runtime to build in (`molt image build --kubernetes-node DIR`: the directory
   * `scripts/ensure-node-bins.sh` prints), so the VM is a real Kubernetes node.
   */
  readonly kubernetesNode?: string;
  /**
   * The control plane to build in (`molt image build --kubernetes-control-plane DIR`: the
   * directory `scripts/ensure-kube-bins.sh` prints), for control-plane VMs.
   */
  readonly kubernetesControlPlane?: string;
  /** Directories laid over the root (`molt image build --overlay`), in order. */
  readonly overlays?: readonly string[];
  /** The builder's progress lines. */
  readonly log: (line: string) => void;
}

export interface VmRelease {
  readonly version: string;
  /** Artifact name → bytes, ready to publish (cmdline included). */
  readonly artifacts: Readonly<Record<string, Uint8Array>>;
  /** Release labels the image implies: the kubelet and containerd it carries. */
  readonly labels: Readonly<Record<string, string>>;
}

/** Run `molt image build`, forwarding its progress; rejects with its last lines if it fails. */
function runBuild(o: VmReleaseOptions): Promise<void> {
  const [command = process.execPath, ...prefix] = o.molt;
  const args = [
    ...[...prefix, 'image', 'build', '--version', o.version, '--out', o.out],
    ...(o.kubernetesNode === undefined ? [] : ['--kubernetes-node', o.kubernetesNode]),
    ...(o.kubernetesControlPlane === undefined
      ? []
      : ['--kubernetes-control-plane', o.kubernetesControlPlane]),
    ...(o.overlays ?? []).flatMap((dir) => ['--overlay', dir]),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let tail = '';
    let partial = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-4000);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') o.log(line.replace(/^molt /, ''));
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new MoltError(
            ErrorCode.ImageBuildFailed,
            `molt image build --version ${o.version} failed (exit ${String(code)}):\n${tail}`,
            { hint: 'it needs root and the network to Debian (or a warm .molt/images cache)' },
          ),
        );
    });
  });
}

/** Build (or take from the cache) VM release `o.version` and read its artifacts. */
export async function buildVmRelease(o: VmReleaseOptions): Promise<VmRelease> {
  await runBuild(o);
  const artifacts: Record<string, Uint8Array> = {};
  for (const name of ArtifactFiles)
    artifacts[name] = new Uint8Array(await readFile(join(o.out, name)));
  const cmdline = (await readFile(join(o.out, 'cmdline'), 'utf8')).trim();
  artifacts['cmdline'] = new TextEncoder().encode(
    o.broken === true ? `${cmdline} ${PanicArgument}` : cmdline,
  );
  const labels = imageLabels(JSON.parse(await readFile(join(o.out, 'image.json'), 'utf8')));
  return { version: o.version, artifacts, labels };
}
