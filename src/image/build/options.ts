// SPDX-License-Identifier: Apache-2.0
/**
 * The flags of `molt image build`, checked before anything is built or written: a bad flag is a
 * `MOLT_BAD_FLAG` with a hint, and the output directory is untouched.
 */
import { parseArgs } from 'node:util';
import { valid as validSemver } from 'semver';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { MaxCmdlineBytes } from '../../core/slots/contract.ts';
import { optionLines, parseOptions } from '../../protocol/flags.ts';
import {
  DefaultCmdline,
  DefaultZstdLevel,
  ImageBuildFlags,
} from '../../protocol/process-flags/image.ts';
import { operatorUsage } from '../operator/options.ts';

export { DefaultCmdline, DefaultZstdLevel };

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
 * Room molt's own arguments take on the kernel command line: `molt.slot=A root=… panic=10 ` in
 * front, ` molt.verity=<64 hex digits>:<offset>` after.
 */
const MoltArgsBytes = 64 + 96;

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
${optionLines(ImageBuildFlags)}

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

/**
 * The kernel arguments: no `root=` or `molt.slot=` (molt adds them per slot), no `molt.verity=`
 * (the build adds it from the hash tree), and short enough.
 */
export function checkCmdline(cmdline: string): string {
  const args = cmdline.trim().split(/\s+/).filter(Boolean);
  const owned = args.find((a) => /^(root|molt\.slot|molt\.verity)=/.test(a));
  if (owned !== undefined)
    throw bad(
      `--cmdline holds ${owned}: molt adds root=, molt.slot= and molt.verity= itself`,
      'leave them out; the boot entry of each slot names its partition, and the build adds the root hash',
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
      options: parseOptions(ImageBuildFlags),
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
