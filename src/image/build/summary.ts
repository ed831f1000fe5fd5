// SPDX-License-Identifier: Apache-2.0
/**
 * `image.json`: what a build made and from what — each artifact's size and digest, the input
 * digest that names the image in the cache, the kernel and Debian packages inside, and how long
 * each stage took. `molt dev publish --dir` reads its version.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Base } from './base.ts';
import { fileDigest } from './digest.ts';
import type { MoltPackage } from './molt-package.ts';
import type { NodeBinary } from './node-binary.ts';
import type { ControlPlaneRuntime, ControlPlaneVersions } from './control-plane-runtime.ts';
import { nodeRuntimeSummary, type NodeRuntime, type NodeRuntimeSummary } from './node-runtime.ts';
import type { BuildOptions, Compression } from './options.ts';
import type { Verity } from './verity.ts';

/** The installer artifacts a build writes (docs/real-machines.md §3), in publishing order. */
export const ArtifactFiles = ['vmlinuz', 'initrd.img', 'rootfs.img', 'cmdline'] as const;
export type ArtifactFile = (typeof ArtifactFiles)[number];

export interface Timings {
  moltMs: number;
  baseMs: number;
  assembleMs: number;
  squashMs: number;
  /** The verity hash tree appended to rootfs.img. */
  verityMs: number;
  totalMs: number;
}

export interface ImageSummary {
  readonly version: string;
  /** Digest of every input; the cache entry `out/<digest>` and equal inputs share it. */
  readonly inputDigest: string;
  /** True when the artifacts came from the cache (no base, tree or squashfs work). */
  readonly cached: boolean;
  readonly artifacts: Readonly<Record<ArtifactFile, { bytes: number; digest: string }>>;
  readonly cmdline: string;
  readonly kernel: string;
  readonly compression: Compression;
  /** Bytes of the root tree before squashing. */
  readonly treeBytes: number;
  /**
   * rootfs.img's dm-verity hash tree (docs/adr/0019 §3): its root and where it starts in the
   * file. Publishing makes them the labels `dev.molt.verity.roothash` and `dev.molt.verity.offset`.
   */
  readonly verity: Verity;
  readonly base: { readonly digest: string; readonly created: string };
  readonly molt: { readonly digest: string; readonly locked: boolean };
  readonly node: { readonly version: string; readonly digest: string };
  /**
   * The Kubernetes node runtime's versions (`--kubernetes-node`); `molt dev publish --dir`
   * makes them the release's labels. Absent in an image without one.
   */
  readonly kubernetesNode?: NodeRuntimeSummary;
  /** The control plane's versions (`--kubernetes-control-plane`). Absent in an image without one. */
  readonly kubernetesControlPlane?: ControlPlaneVersions;
  readonly timings: Timings;
  readonly builtAt: string;
  /** Debian package → version, as installed in the base tree. */
  readonly packages: Readonly<Record<string, string>>;
}

export interface SummaryInputs {
  readonly o: BuildOptions;
  readonly inputDigest: string;
  readonly base: Base;
  readonly molt: MoltPackage;
  readonly node: NodeBinary;
  readonly kubernetesNode: NodeRuntime | undefined;
  readonly controlPlane: ControlPlaneRuntime | undefined;
  readonly treeBytes: number;
  readonly verity: Verity;
  /** The image's kernel arguments with `molt.verity=` (verity.ts). */
  readonly cmdline: string;
  readonly timings: Timings;
}

/** The summary of the artifacts in `dir`. */
export async function summaryOf(dir: string, i: SummaryInputs): Promise<ImageSummary> {
  const artifacts = {} as Record<ArtifactFile, { bytes: number; digest: string }>;
  for (const name of ArtifactFiles) {
    const path = join(dir, name);
    artifacts[name] = { bytes: (await stat(path)).size, digest: await fileDigest(path) };
  }
  return {
    version: i.o.version,
    inputDigest: i.inputDigest,
    cached: false,
    artifacts,
    cmdline: i.cmdline,
    kernel: i.base.kernel,
    compression: i.o.compression,
    treeBytes: i.treeBytes,
    verity: { ...i.verity },
    base: { digest: i.base.digest, created: i.base.created },
    molt: { digest: i.molt.digest, locked: i.molt.locked },
    node: { version: i.node.version, digest: i.node.digest },
    ...(i.kubernetesNode && { kubernetesNode: nodeRuntimeSummary(i.kubernetesNode.versions) }),
    ...(i.controlPlane && { kubernetesControlPlane: i.controlPlane.versions }),
    timings: { ...i.timings },
    builtAt: new Date().toISOString(),
    packages: i.base.packages,
  };
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The summary for people: one line per artifact, then sizes and times. */
export function renderSummary(s: ImageSummary, out: string): string {
  const lines = ArtifactFiles.map(
    (name) =>
      `  ${name.padEnd(11)} ${mib(s.artifacts[name].bytes).padStart(10)}  ${s.artifacts[name].digest}`,
  );
  const t = s.timings;
  const k = s.kubernetesNode;
  const c = s.kubernetesControlPlane;
  return [
    `built molt ${s.version} into ${out}${s.cached ? ' (cached)' : ''}`,
    ...lines,
    `  kernel ${s.kernel}, ${s.compression.kind === 'zstd' ? `zstd:${s.compression.level}` : 'xz'} squashfs of a ${mib(s.treeBytes)} tree, ${Object.keys(s.packages).length} Debian packages`,
    ...(k === undefined
      ? []
      : [
          `  kubernetes node: kubelet ${k.kubelet}, containerd ${k.containerd}, crictl ${k.crictl}, CNI plugins ${k.cniPlugins}, runc ${s.packages['runc'] ?? '?'} (Debian)`,
        ]),
    ...(c === undefined
      ? []
      : [
          `  kubernetes control plane: ${c.kubernetes} (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl), etcd ${c.etcd}`,
        ]),
    `  verity root ${s.verity.rootHash}, hash tree at byte ${String(s.verity.hashOffset)} of rootfs.img`,
    `  took ${(t.totalMs / 1000).toFixed(1)} s (base ${(t.baseMs / 1000).toFixed(1)} s, molt ${(t.moltMs / 1000).toFixed(1)} s, tree ${(t.assembleMs / 1000).toFixed(1)} s, squashfs ${(t.squashMs / 1000).toFixed(1)} s, verity ${(t.verityMs / 1000).toFixed(1)} s)`,
    `  input ${s.inputDigest}`,
    '',
  ].join('\n');
}
