// SPDX-License-Identifier: Apache-2.0
/**
 * What goes into the base tree (the slow, Debian part of an image), as data: its digest names the
 * cached tree, so a rebuild with the same packages, sources and initramfs files reuses it and only
 * an edit of one of them builds it again. Everything else (molt, Node, units, overlays, version)
 * is laid over the base in seconds.
 */
import { createHash } from 'node:crypto';
import { KernelFlavours, type BuildOptions } from './options.ts';

/**
 * What a control-plane image needs of Debian (control-plane-runtime.ts): `etcd-server` for its
 * `etcd.service` and its `etcd` user — the binary run is molt's given etcd.
 */
export const ControlPlanePackages = ['etcd-server'] as const;

/** Bump when the way the base is built changes without any input changing. */
const RecipeRevision = 1;
export const Suite = 'bookworm';

/**
 * The packages on top of minbase: systemd as PID 1 with udev and kmod, mount/umount, the kernel
 * and initramfs-tools (zstd compresses the initramfs), what the Node binary links (libc6,
 * libstdc++6, libgcc-s1), CA certificates, networkd's DNS partner resolved, e2fsprogs so
 * systemd-fsck can check STATE and EPHEMERAL at boot, and dosfstools for the ESP: FAT has no
 * journal, and a power cut while molt writes a slot's kernel leaves it for `fsck.fat -a` to repair
 * before anything writes there again (docs/adr/0008). cryptsetup-bin gives the initramfs
 * `veritysetup`, which opens the slot through dm-verity (docs/adr/0019 §3).
 */
export const BasePackages = [
  'systemd-sysv',
  'systemd-resolved',
  'udev',
  'kmod',
  'mount',
  'util-linux',
  'e2fsprogs',
  'dosfstools',
  'cryptsetup-bin',
  'initramfs-tools',
  'zstd',
  'libc6',
  'libstdc++6',
  'libgcc-s1',
  'ca-certificates',
] as const;

/**
 * The Debian packages the Kubernetes node runtime (`--kubernetes-node`, node-runtime.ts) needs in
 * the base: runc, which containerd's shim runs (it has C parts and links libseccomp, so it cannot
 * be built with CGO_ENABLED=0 like the other binaries), and iptables, with which the bridge and
 * portmap CNI plugins masquerade and forward ports (bookworm's uses the nft backend). What else the
 * kubelet and containerd run is in the base already: mount/umount (mount), nsenter (util-linux),
 * modprobe (kmod).
 */
export const NodeRuntimePackages = ['iptables', 'runc'] as const;

export const DefaultMirrors = [
  `deb http://deb.debian.org/debian ${Suite} main`,
  `deb http://deb.debian.org/debian ${Suite}-updates main`,
  `deb http://deb.debian.org/debian-security ${Suite}-security main`,
] as const;

/** dpkg path filters: no manuals, docs (but the copyright files) or translations in the image. */
export const DpkgFilters = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/locale/*',
  'path-include=/usr/share/locale/locale.alias',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/lintian/*',
] as const;

export interface BaseRecipe {
  readonly revision: number;
  readonly suite: string;
  readonly mirrors: readonly string[];
  readonly packages: readonly string[];
  readonly dpkg: readonly string[];
  readonly pruneModules: boolean;
  /** Digest of deploy/image/initramfs-tools and deploy/image/base (the hook scripts). */
  readonly files: string;
}

/** A mirror given as a URL becomes the `deb URL bookworm main` line. */
export function sourceLine(mirror: string): string {
  return /^deb(-src)?\s/.test(mirror) ? mirror : `deb ${mirror} ${Suite} main`;
}

export function baseRecipe(o: BuildOptions, filesDigest: string): BaseRecipe {
  return {
    revision: RecipeRevision,
    suite: Suite,
    mirrors: o.mirrors.length === 0 ? [...DefaultMirrors] : o.mirrors.map(sourceLine),
    packages: [
      ...new Set([
        ...BasePackages,
        KernelFlavours[o.kernel],
        ...(o.kubernetesNode === undefined ? [] : NodeRuntimePackages),
        ...(o.kubernetesControlPlane === undefined ? [] : ControlPlanePackages),
        ...o.packages,
      ]),
    ].sort(),
    dpkg: [...DpkgFilters],
    pruneModules: !o.fullModules,
    files: filesDigest,
  };
}

/** `sha256:<hex>` of a value's JSON with sorted keys: the same inputs always name the same entry. */
export function digestOf(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A cache directory name for a digest (`sha256:ab12…` → `ab12…`, shortened). */
export function cacheName(digest: string): string {
  return digest.replace(/^sha256:/, '').slice(0, 32);
}
