// SPDX-License-Identifier: Apache-2.0
/**
 * `installDisk`: molt onto a disk file or a block device (docs/install.md). Everything that can be
 * checked is checked before the first write — the config and PKI, the disk (in use? someone
 * else's? a machine's? private? large enough?), the image pulled, verified and staged with the
 * agent's own install path, its sizes against the plan — so bad input leaves the disk
 * byte-for-byte as it was. Then the disk is written in one go.
 */
import { access, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkImageFits } from '../../core/disk/fit.ts';
import { requireUnused } from '../../core/disk/in-use.ts';
import {
  ControlPlaneStateBytes,
  DefaultSizes,
  planDisk,
  type DiskPlan,
  type LayoutSizes,
} from '../../core/disk/layout.ts';
import { judgeDisk, requireInstallable, type DiskVerdict } from '../../core/disk/table.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { MachineConfig } from '../../protocol/machine-config.ts';
import { readAgentKubeconfig, readInstallConfig, readMachinePki, readNodeFiles } from './inputs.ts';
import { checkSandboxImage } from './sandbox-check.ts';
import { stageMachine } from './stage.ts';
import { readClusterPki } from './cluster-pki.ts';
import { probeTarget, readContent, readUse, type DiskTarget } from './target.ts';
import { writeDisk, type Log } from './write.ts';
import { type BootloaderName } from '../../core/boot/bootloaders.ts';

export interface InstallOptions {
  /** A disk image file (created or extended with `diskBytes`) or a block device. */
  readonly disk: string;
  /** The installer image reference (`host[:port]/repo:tag`). */
  readonly image: string;
  /** The machine config file (`state/config.yaml`). */
  readonly config: string;
  /** Directory with `ca.pem` and the node certificate and key. */
  readonly pki: string;
  /** Must agree with the config's; @default the config's */
  readonly bootloader?: BootloaderName;
  /** Partition sizes in bytes (whole MiB). @default DefaultSizes (STATE ControlPlaneStateBytes on a control plane) */
  readonly sizes?: Partial<Omit<LayoutSizes, 'minEphemeral'>>;
  /** A disk file's size: created at, or extended to, this many bytes (never shrunk). */
  readonly diskBytes?: number;
  /** Replace a partition table or filesystem that is not molt's. */
  readonly wipe?: boolean;
  /** Replace a machine: molt's layout whose STATE holds a config, keys, a journal. */
  readonly overwriteMachine?: boolean;
  /** Pull over plain HTTP. */
  readonly insecure?: boolean;
  /** The bootloader binary to install instead of building GRUB or finding systemd-boot's. */
  readonly efiBinary?: string;
  /** Key to verify the image's signature with on this host. */
  readonly publicKey?: string;
  /** The agent's kubeconfig, carried onto STATE at the config's `kubernetes.kubeconfig`. */
  readonly kubeconfig?: string;
  /** The cluster's PKI (`molt pki kubernetes`), for a config with `controlPlane.pki`. */
  readonly kubePki?: string;
  /** Where the temporary machine root goes (it holds a copy of the image). @default os.tmpdir() */
  readonly workDir?: string;
  /** Check everything, print the plan, write nothing. */
  readonly dryRun?: boolean;
  readonly log?: Log;
  readonly now?: Date;
}

export interface InstallResult {
  readonly disk: string;
  readonly kind: DiskTarget['kind'];
  /**
   * What the disk held before: nothing, molt's layout with an empty STATE, a machine (replaced
   * with --overwrite-machine), or someone else's (replaced with --wipe).
   */
  readonly previous: DiskVerdict['kind'];
  /** The node the replaced machine's STATE named. */
  readonly previousNode?: string;
  readonly node: string;
  readonly bootloader: BootloaderName;
  readonly image: { readonly ref: string; readonly digest: string; readonly version: string };
  readonly plan: DiskPlan;
  readonly dryRun: boolean;
  readonly durationMs: number;
}

function badFlag(message: string, hint?: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, hint === undefined ? {} : { hint });
}

/** The size the disk will have: a device's own; a file's, grown to `diskBytes`. */
async function targetBytes(target: DiskTarget, options: InstallOptions): Promise<number> {
  const wanted = options.diskBytes;
  if (target.kind === 'block') {
    if (wanted !== undefined)
      throw badFlag(`--disk-size applies to disk files; ${target.path} is a block device`);
    return target.bytes;
  }
  if (!target.exists) {
    if (wanted === undefined)
      throw badFlag(
        `${target.path} does not exist`,
        'give --disk-size to create a disk file of that size',
      );
    await access(dirname(target.path)).catch(() => {
      throw badFlag(`cannot create ${target.path}: its directory does not exist`);
    });
  }
  if (wanted !== undefined && wanted < target.bytes)
    throw badFlag(
      `--disk-size ${String(wanted)} is smaller than ${target.path} (${String(target.bytes)} bytes); molt never shrinks a disk file`,
    );
  return Math.max(target.bytes, wanted ?? 0);
}

/**
 * A disk file molt writes holds STATE — the node's private key, the config with any registry
 * password — in the clear, so only its owner may read it: molt creates it 0600 and refuses an
 * existing one that group or others can open. It does not narrow the mode itself: whoever opened
 * the file while it was readable keeps reading it, so that is the owner's decision to make.
 */
async function requirePrivate(target: DiskTarget): Promise<void> {
  if (target.kind !== 'file' || !target.exists) return;
  const mode = (await stat(target.path)).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  throw new MoltError(
    ErrorCode.SecretExposed,
    `${target.path} is open to group or others (mode ${mode.toString(8).padStart(4, '0')}), and the disk will hold the machine's private key and config`,
    {
      hint: `chmod 600 ${target.path}, or let molt create the disk file (--disk-size) 0600`,
    },
  );
}

/** Every input of the machine read and checked on this host, before the disk is looked at. */
async function readMachine(options: InstallOptions) {
  const { config, text } = await readInstallConfig(options.config, options.bootloader);
  const pki = await readMachinePki(options.pki, config.node, options.now ?? new Date());
  const nodeFiles = await readNodeFiles(config);
  const kubeconfig = await readAgentKubeconfig(config, options.kubeconfig);
  const clusterPki = await readClusterPki(config, options.kubePki);
  await checkSandboxImage(config, options.insecure ?? false);
  return { config, text, pki, nodeFiles, kubeconfig, clusterPki };
}

/** The partition sizes: those given, else the defaults, with a control plane's larger STATE. */
export function layoutSizes(
  config: Pick<MachineConfig, 'controlPlane'>,
  given: InstallOptions['sizes'],
): LayoutSizes {
  // A control plane's STATE holds its Kubernetes bundles too: larger unless a size is given.
  const controlPlane = config.controlPlane === undefined ? {} : { state: ControlPlaneStateBytes };
  return { ...DefaultSizes, ...controlPlane, ...given };
}

/** Install molt onto `options.disk`; see the module comment for the order of checks and writes. */
export async function installDisk(options: InstallOptions): Promise<InstallResult> {
  const started = performance.now();
  const log = options.log ?? (() => undefined);
  const { config, text, pki, nodeFiles, kubeconfig, clusterPki } = await readMachine(options);
  const target = await probeTarget(options.disk);
  const diskBytes = await targetBytes(target, options);
  requireUnused(await readUse(target), options.disk);
  const verdict = judgeDisk(await readContent(target));
  requireInstallable(
    verdict,
    { wipe: options.wipe ?? false, overwriteMachine: options.overwriteMachine ?? false },
    options.disk,
  );
  await requirePrivate(target);
  const plan = planDisk(diskBytes, layoutSizes(config, options.sizes));
  const root = await mkdtemp(join(options.workDir ?? tmpdir(), 'molt-install-'));
  try {
    log(`pulling ${options.image} into a temporary machine root`);
    const staged = await stageMachine({
      root,
      config,
      configText: text,
      pki,
      nodeFiles,
      kubeconfig,
      clusterPki,
      image: options.image,
      insecure: options.insecure ?? false,
      ...(options.publicKey !== undefined && { publicKey: options.publicKey }),
      ...(options.efiBinary !== undefined && { efiBinary: options.efiBinary }),
    });
    checkImageFits(staged.sizes, plan, staged.efiBytes);
    if (options.dryRun !== true) {
      // The pull took a while: someone may have mounted the disk meanwhile.
      requireUnused(await readUse(target), options.disk);
      await writeDisk(target, plan, staged, log);
    }
    return {
      disk: target.path,
      kind: target.kind,
      previous: verdict.kind,
      ...(verdict.kind === 'machine' &&
        verdict.node !== undefined && { previousNode: verdict.node }),
      node: config.node,
      bootloader: config.bootloader,
      image: {
        ref: options.image,
        digest: staged.manifest.imageDigest,
        version: staged.manifest.version,
      },
      plan,
      dryRun: options.dryRun === true,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
