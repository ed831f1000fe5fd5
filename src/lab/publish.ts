// SPDX-License-Identifier: Apache-2.0
/**
 * `molt lab publish VERSION` (docs/adr/0007): push a release into the lab's repository, labelled
 * official and with its channels, where the operator discovers it.
 *
 * - A lab release (the default): small random artifacts lab machines install into slot files;
 *   `--broken` labels it never to become healthy (the lab firmware's health check fails).
 * - A VM release (`--vm`): a real OS release built by `molt image build` (vm/vm-release.ts), on
 *   channel `vm` by default (the lab's VMs follow it); `--broken` gives it a kernel that panics
 *   at boot, so the VM's bootloader really falls back. In a lab with Kubernetes its VMs are nodes,
 *   so the release carries the node runtime with the current kubelet (lab-nodes.ts) and says so
 *   in its labels.
 *
 * A version is published once: lab and VM releases share the repository, and re-pushing a tag
 * would silently replace the release the operator knows under that version.
 */
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { parseTag } from '../core/releases/tag.ts';
import { createRegistryClient } from '../oci/index.ts';
import { official } from './fleet/release-feed.ts';
import type { LabIo } from './io.ts';
import { pushInstallerImage } from './services/installer-image.ts';
import { requireLab } from './state.ts';
import { VmChannel } from './vm/vm-machines.ts';
import { nodeRuntimeFor } from './lab-nodes.ts';
import { buildVmRelease, writeBrokenKubeletOverlay, type VmRelease } from './vm/vm-release.ts';

export interface LabPublishOptions {
  readonly version: string;
  /** Comma-separated. @default `stable,beta`, or `vm` with `vm` */
  readonly channels?: string | undefined;
  readonly broken: boolean;
  /** A VM release whose kubelet cannot start (needs `vm` and a lab with Kubernetes). */
  readonly brokenKubelet?: boolean;
  /** A real OS release for the lab's VMs. */
  readonly vm?: boolean;
  /** The argv that starts molt (builds VM releases). @default this process's */
  readonly molt?: readonly string[];
  readonly json?: boolean;
  /** Progress of a VM release's build. @default to `io.err` */
  readonly log?: (line: string) => void;
}

/** The artifacts and labels of the release to push: a VM release is built first. */
async function artifactsOf(
  dir: string,
  o: LabPublishOptions & { readonly nodes: boolean; readonly controlPlane?: string | undefined },
  io: LabIo,
): Promise<Pick<VmRelease, 'artifacts' | 'labels'> | undefined> {
  if (o.vm !== true) return undefined;
  const log =
    o.log ??
    ((line: string) => {
      io.err(`${line}\n`);
    });
  const kubernetesNode = o.nodes
    ? await nodeRuntimeFor(o.version, log, o.controlPlane !== undefined)
    : undefined;
  const brokenKubelet = o.brokenKubelet === true;
  // The overlay is the lab's own file, rewritten each time: its content is part of the build's
  // cache key, so a changed drop-in is a new build, never a stale one.
  const overlays = brokenKubelet
    ? [await writeBrokenKubeletOverlay(join(dir, 'overlays', 'broken-kubelet'))]
    : [];
  const suffix = o.broken ? '-broken' : brokenKubelet ? '-broken-kubelet' : '';
  return buildVmRelease({
    molt: o.molt ?? [process.execPath, process.argv[1] ?? 'molt'],
    version: o.version,
    out: join(dir, 'images', `${o.version}${suffix}`),
    broken: o.broken,
    ...(kubernetesNode !== undefined && { kubernetesNode }),
    ...(o.controlPlane !== undefined && { kubernetesControlPlane: o.controlPlane }),
    overlays,
    log,
  });
}

/**
 * A release whose kubelet cannot start is only a VM release with a kubelet in it: anything else
 * is refused (MOLT_BAD_FLAG) before anything is built or pushed. `kubernetes`: whether the lab
 * has it (undefined: the lab was not looked for yet).
 */
function checkBrokenKubelet(o: LabPublishOptions, kubernetes?: boolean): void {
  if (o.brokenKubelet !== true) return;
  if (o.vm !== true || o.broken)
    throw new MoltError(
      ErrorCode.BadFlag,
      '--broken-kubelet is a VM release whose kubelet cannot start: it needs --vm, and not --broken',
      { hint: 'molt lab publish 1.2.0 --vm --broken-kubelet' },
    );
  if (kubernetes === false)
    throw new MoltError(
      ErrorCode.BadFlag,
      '--broken-kubelet needs a lab with Kubernetes: without it the VMs run no kubelet',
      { hint: 'start the lab without --no-kubernetes (molt lab up --vms 2 --workers 0)' },
    );
}

function describe(o: LabPublishOptions): string {
  if (o.brokenKubelet === true) return ', with a kubelet that cannot start';
  if (!o.broken) return o.vm === true ? ' (a real OS release for the VMs)' : '';
  return o.vm === true
    ? ', built with a kernel that panics at boot'
    : ', built never to become healthy';
}

/**
 * The version as a release tag discovery reads (core/releases/tag.ts): anything else would be
 * pushed, and then skipped by the operator as a tag that is no version — a publish that did nothing.
 */
function checkVersion(version: string): void {
  if (parseTag(version).ok) return;
  throw new MoltError(
    ErrorCode.InvalidVersion,
    `${JSON.stringify(version)} is not a semver version, so the operator would never see it`,
    { hint: 'give a version like 1.2.0 or 1.2.0-rc.1: molt lab publish 1.2.0' },
  );
}

/** Push release `o.version` into the running lab in `dir`. */
export async function labPublish(dir: string, o: LabPublishOptions, io: LabIo): Promise<number> {
  checkVersion(o.version);
  checkBrokenKubelet(o);
  const s = await requireLab(dir);
  checkBrokenKubelet(o, s.kubeconfig !== undefined);
  const channels = o.channels ?? (o.vm === true ? VmChannel : 'stable,beta');
  const client = createRegistryClient({ registry: s.registry, insecure: true });
  try {
    const image = `${s.registry}/${s.repository}:${o.version}`;
    if ((await client.headManifest(s.repository, o.version)) !== undefined)
      throw new MoltError(ErrorCode.LabReleaseExists, `${image} is already published`, {
        hint: 'publish another version: the operator knows a release by its version',
      });
    const built = await artifactsOf(
      dir,
      { ...o, nodes: s.kubeconfig !== undefined, controlPlane: s.controlPlaneImage },
      io,
    );
    const artifacts = built?.artifacts;
    const labels = {
      ...official,
      ...built?.labels,
      'dev.molt.channels': channels,
      ...(o.broken && o.vm !== true && { 'dev.molt.lab.health': 'never' }),
    };
    const pushed = await pushInstallerImage(client, s.repository, o.version, {
      version: o.version,
      labels,
      ...(artifacts !== undefined && { artifacts }),
    });
    io.out(
      o.json === true
        ? `${JSON.stringify({ image, digest: pushed.digest, channels: channels.split(','), broken: o.broken, brokenKubelet: o.brokenKubelet === true, vm: o.vm === true })}\n`
        : `published ${image} (${pushed.digest}) to ${channels}${describe(o)}\n`,
    );
    return 0;
  } finally {
    await client.close();
  }
}
