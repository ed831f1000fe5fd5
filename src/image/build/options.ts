// SPDX-License-Identifier: Apache-2.0
/**
 * The flags of `molt image build`, checked before anything is built or written: a bad flag is a
 * `MOLT_BAD_FLAG` with a hint, and the output directory is untouched.
 */
import { parseArgs } from 'node:util';
import { valid as validSemver } from 'semver';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { MaxCmdlineBytes } from '../../core/slots/contract.ts';
import { operatorUsage } from '../operator/options.ts';

/** The kernel flavours the build knows (docs/image.md: why `amd64` is the default). */
export const KernelFlavours = {
  amd64: 'linux-image-amd64',
  cloud: 'linux-image-cloud-amd64',
} as const;
export type KernelFlavour = keyof typeof KernelFlavours;
/** squashfs compression: zstd at a level (1–22), or xz with the x86 filter. */
export type Compression =
  { readonly kind: 'zstd'; readonly level: number } | { readonly kind: 'xz' };
/**
 * zstd level 9: measured here on a 556 MiB tree, 153 MB in 11 s, against 143 MB in 129 s at 15
 * and 142 MB in 415 s at 19 (docs/image.md); xz is 128 MB in 271 s.
 */
export const DefaultZstdLevel = 9;

/**
 * The image's own kernel arguments. molt puts `molt.slot=X root=PARTLABEL=molt-x panic=10` in
 * front. Two consoles: the screen, and the serial port last so it is /dev/console (VMs, IPMI SoL).
 */
export const DefaultCmdline = 'console=tty0 console=ttyS0,115200 ro quiet rootfstype=squashfs';
/** Room molt's own arguments take on the kernel command line (`molt.slot=A root=… panic=10 `). */
const MoltArgsBytes = 64;

export interface BuildOptions {
  readonly version: string;
  readonly out: string;
  readonly overlays: readonly string[];
  readonly cmdline: string;
  readonly cache: string;
  /** A packed molt (`npm pack`); default: pack the molt this command runs from. */
  readonly moltPackage?: string;
  /** The Node 24 binary; default: the npm `node` package beside molt. */
  readonly node?: string;
  readonly compression: Compression;
  readonly kernel: KernelFlavour;
  /** Extra Debian packages for the base tree. */
  readonly packages: readonly string[];
  /** Extra systemd units to enable (from overlays). */
  readonly enable: readonly string[];
  /**
   * The Kubernetes node runtime to carry (`scripts/ensure-node-bins.sh`'s directory); its files
   * are checked with the other inputs, before anything is built (node-runtime.ts).
   */
  readonly kubernetesNode?: string;
  /** `--kubernetes-control-plane DIR`: etcd and the control-plane binaries (control-plane-runtime.ts). */
  readonly kubernetesControlPlane?: string;
  /** apt sources (`deb …` lines or mirror URLs); default Debian's bookworm, updates and security. */
  readonly mirrors: readonly string[];
  readonly fullModules: boolean;
  readonly noCache: boolean;
  readonly json: boolean;
  readonly verbose: boolean;
}

export const usage = `Usage: molt image build --version V --out DIR [options]
       molt image build --operator (--out DIR | --push REF) [options]

Builds an OS release from Debian bookworm packages: vmlinuz, initrd.img, rootfs.img (squashfs),
cmdline and image.json in DIR, ready for \`molt dev publish --dir DIR\` (docs/image.md).

Options:
  --version V          the release version (semver), shown by the boot marker (required)
  --out DIR            where the artifacts go (required)
  --overlay DIR        copy DIR's files over the root before squashing (repeatable, in order)
  --enable UNIT        enable a systemd unit an overlay brings (repeatable)
  --cmdline "ARGS"     the image's kernel arguments (default: "${DefaultCmdline}")
  --molt-package TGZ   the molt to install (default: npm pack of this molt)
  --node FILE          the Node 24 binary (default: the npm "node" package beside molt)
  --package NAME       an extra Debian package in the base tree (repeatable)
  --kubernetes-node DIR
                       carry a Kubernetes node: kubelet, containerd, crictl and CNI plugins from DIR
                       (what \`bash scripts/ensure-node-bins.sh\` prints), runc and iptables
  --kubernetes-control-plane DIR
                       carry a Kubernetes control plane from DIR (what
                       \`bash scripts/ensure-kube-bins.sh\` prints): its components in
                       /usr/lib/molt/kubernetes/bin, etcd, etcdutl, kubectl, Debian's etcd.service
  --kernel FLAVOUR     amd64 (default: watchdogs, SATA) or cloud (smaller, VMs without i6300esb)
  --full-modules       keep every kernel module (default: drop sound, GPUs, radios, media …)
  --compression C      squashfs compression: zstd (level ${DefaultZstdLevel}), zstd:LEVEL (1-22), or xz
                       (smallest, slowest to build and to read)
  --mirror SOURCE      apt source, a URL or a "deb …" line (repeatable; default deb.debian.org)
  --cache DIR          build cache (default: $MOLT_IMAGE_CACHE or .molt/images)
  --no-cache           rebuild every stage, ignoring (and replacing) cached ones
  --json               print the summary (image.json) as JSON
  --verbose            show what the tools print

${operatorUsage}`;

/** Where `--kubernetes-node`'s directory comes from. */
export const nodeBinsHint =
  'give the directory `bash scripts/ensure-node-bins.sh` prints (it builds the binaries)';

function bad(message: string, hint?: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, {
    hint: hint ?? 'molt image build --help shows the flags',
  });
}

/** `zstd`, `zstd:LEVEL` or `xz`. */
export function parseCompression(value: string): Compression {
  if (value === 'xz') return { kind: 'xz' };
  const m = /^zstd(?::(\d{1,2}))?$/.exec(value);
  const level = m === null ? NaN : Number(m[1] ?? DefaultZstdLevel);
  if (level >= 1 && level <= 22) return { kind: 'zstd', level };
  throw bad(`--compression ${value}: choose zstd, zstd:LEVEL (1-22) or xz`);
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw bad(`--${flag} ${value}: choose ${allowed.join(' or ')}`);
}

/** The kernel arguments: no `root=` or `molt.slot=` (molt adds them per slot), and short enough. */
export function checkCmdline(cmdline: string): string {
  const args = cmdline.trim().split(/\s+/).filter(Boolean);
  const owned = args.find((a) => /^(root|molt\.slot)=/.test(a));
  if (owned !== undefined)
    throw bad(
      `--cmdline holds ${owned}: molt adds root= and molt.slot= for each slot`,
      'leave them out; the boot entry of each slot names its partition',
    );
  const text = args.join(' ');
  // The characters molt passes to a bootloader (core/boot/slot-entry.ts refuses the rest at pull).
  const odd = args.find((a) => !/^[A-Za-z0-9._,:=/+@%-]+$/.test(a));
  if (odd !== undefined)
    throw bad(
      `--cmdline argument ${JSON.stringify(odd)} has characters molt does not pass to a bootloader`,
      'kernel arguments may use letters, digits and . _ , : = / + @ % -',
    );
  const bytes = Buffer.byteLength(text);
  if (bytes + MoltArgsBytes > MaxCmdlineBytes)
    throw bad(`--cmdline is ${bytes} bytes; with molt's arguments it passes ${MaxCmdlineBytes}`);
  return text;
}

/** `--kubernetes-node DIR`; what DIR holds is checked with the other inputs (node-runtime.ts). */
function kubernetesNodeOption(dir: string | undefined): { kubernetesNode?: string } {
  if (dir === '') throw bad('--kubernetes-node needs a directory', nodeBinsHint);
  return dir === undefined ? {} : { kubernetesNode: dir };
}

/** `--kubernetes-control-plane DIR`; what DIR holds is checked with the other inputs. */
function controlPlaneOption(dir: string | undefined): { kubernetesControlPlane?: string } {
  if (dir === '')
    throw bad(
      '--kubernetes-control-plane needs a directory',
      'give the directory `bash scripts/ensure-kube-bins.sh` prints (it builds the binaries)',
    );
  return dir === undefined ? {} : { kubernetesControlPlane: dir };
}

/** Parse and check the flags; `null` means `--help`. */
export function parseBuildOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): BuildOptions | null {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        version: { type: 'string' },
        out: { type: 'string' },
        overlay: { type: 'string', multiple: true, default: [] },
        enable: { type: 'string', multiple: true, default: [] },
        cmdline: { type: 'string', default: DefaultCmdline },
        'molt-package': { type: 'string' },
        node: { type: 'string' },
        package: { type: 'string', multiple: true, default: [] },
        'kubernetes-node': { type: 'string' },
        'kubernetes-control-plane': { type: 'string' },
        kernel: { type: 'string', default: 'amd64' },
        'full-modules': { type: 'boolean', default: false },
        compression: { type: 'string', default: 'zstd' },
        mirror: { type: 'string', multiple: true, default: [] },
        cache: { type: 'string' },
        'no-cache': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw bad((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) return null;
  if (v.version === undefined) throw bad('--version is required');
  if (validSemver(v.version) !== v.version)
    throw new MoltError(ErrorCode.InvalidVersion, `--version ${v.version} is not a semver`, {
      hint: 'e.g. --version 1.1.0 (agents compare releases by semver)',
    });
  if (v.out === undefined) throw bad('--out is required');
  const unit = v.enable.find((u) => !/^[A-Za-z0-9:_.@-]+\.[a-z]+$/.test(u));
  if (unit !== undefined) throw bad(`--enable ${unit} is not a systemd unit name`);
  const pkg = v.package.find((p) => !/^[a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+:~-]+)?$/.test(p));
  if (pkg !== undefined) throw bad(`--package ${pkg} is not a Debian package name`);
  return {
    version: v.version,
    out: v.out,
    overlays: v.overlay,
    enable: v.enable,
    cmdline: checkCmdline(v.cmdline),
    cache: v.cache ?? env['MOLT_IMAGE_CACHE'] ?? '.molt/images',
    ...(v['molt-package'] !== undefined && { moltPackage: v['molt-package'] }),
    ...(v.node !== undefined && { node: v.node }),
    packages: v.package,
    ...kubernetesNodeOption(v['kubernetes-node']),
    ...controlPlaneOption(v['kubernetes-control-plane']),
    kernel: oneOf('kernel', v.kernel, ['amd64', 'cloud'] as const),
    fullModules: v['full-modules'],
    compression: parseCompression(v.compression),
    mirrors: v.mirror,
    noCache: v['no-cache'],
    json: v.json,
    verbose: v.verbose,
  };
}
