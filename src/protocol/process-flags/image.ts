// SPDX-License-Identifier: Apache-2.0
/**
 * The flags of `molt image build` — an OS release, or with `--operator` the operator's container
 * image (src/image/build/options.ts, src/image/operator/options.ts) — declared once (`../flags.ts`).
 */
import { HelpFlag, type FlagTable } from '../flags.ts';

/**
 * The image's own kernel arguments. molt puts `molt.slot=X root=PARTLABEL=molt-x panic=10` in
 * front. Two consoles: the screen, and the serial port last so it is /dev/console (VMs, IPMI SoL).
 */
export const DefaultCmdline = 'console=tty0 console=ttyS0,115200 ro quiet rootfstype=squashfs';

/**
 * zstd level 9: measured here on a 556 MiB tree, 153 MB in 11 s, against 143 MB in 129 s at 15
 * and 142 MB in 415 s at 19 (docs/image.md); xz is 128 MB in 271 s.
 */
export const DefaultZstdLevel = 9;

/** What both builds take: where molt and Node come from, the apt sources, the cache, the output. */
const Shared = {
  'molt-package': {
    type: 'string',
    value: 'TGZ',
    help: 'the molt to install (default: npm pack of this molt)',
  },
  node: {
    type: 'string',
    value: 'FILE',
    help: 'the Node 24 binary (default: the npm "node" package beside molt)',
  },
  mirror: {
    type: 'string',
    multiple: true,
    value: 'SOURCE',
    help: 'apt source, a URL or a "deb …" line (repeatable; default deb.debian.org)',
  },
  cache: {
    type: 'string',
    value: 'DIR',
    help: 'build cache (default: $MOLT_IMAGE_CACHE or .molt/images)',
  },
  'no-cache': {
    type: 'boolean',
    help: 'rebuild every stage, ignoring (and replacing) cached ones',
  },
  json: { type: 'boolean', help: 'print the summary as JSON' },
  verbose: { type: 'boolean', help: 'show what the tools print' },
} as const satisfies FlagTable;

/** `molt image build --version V --out DIR`: an OS release. */
export const ImageBuildFlags = {
  version: {
    type: 'string',
    value: 'V',
    help: 'the release version (semver), shown by the boot marker (required)',
  },
  out: { type: 'string', value: 'DIR', help: 'where the artifacts go (required)' },
  overlay: {
    type: 'string',
    multiple: true,
    value: 'DIR',
    help: 'copy DIR’s files over the root before squashing (repeatable, in order)',
  },
  enable: {
    type: 'string',
    multiple: true,
    value: 'UNIT',
    help: 'enable a systemd unit an overlay brings (repeatable)',
  },
  cmdline: {
    type: 'string',
    value: 'ARGS',
    default: DefaultCmdline,
    help: `the image’s kernel arguments (default: "${DefaultCmdline}")`,
  },
  package: {
    type: 'string',
    multiple: true,
    value: 'NAME',
    help: 'an extra Debian package in the base tree (repeatable)',
  },
  'kubernetes-node': {
    type: 'string',
    value: 'DIR',
    help: 'carry a Kubernetes node: kubelet, containerd, crictl and CNI plugins from DIR (what `bash scripts/ensure-node-bins.sh` prints), runc and iptables',
  },
  'kubernetes-control-plane': {
    type: 'string',
    value: 'DIR',
    help: 'carry a Kubernetes control plane from DIR (what `bash scripts/ensure-kube-bins.sh` prints): its components in /usr/lib/molt/kubernetes/bin, etcd, etcdutl, kubectl, Debian’s etcd.service',
  },
  kernel: {
    type: 'string',
    value: 'FLAVOUR',
    default: 'amd64',
    choices: ['amd64', 'cloud'],
    help: 'amd64 (default: watchdogs, SATA) or cloud (smaller, VMs without i6300esb)',
  },
  'full-modules': {
    type: 'boolean',
    help: 'keep every kernel module (default: drop sound, GPUs, radios, media …)',
  },
  compression: {
    type: 'string',
    value: 'C',
    default: 'zstd',
    help: `squashfs compression: zstd (level ${String(DefaultZstdLevel)}), zstd:LEVEL (1-22), or xz (smallest, slowest to build and to read)`,
  },
  ...Shared,
  help: HelpFlag,
} as const satisfies FlagTable;

/** `molt image build --operator (--out DIR | --push REF)`: the operator's container image. */
export const OperatorImageFlags = {
  operator: {
    type: 'boolean',
    help: 'build the operator’s container image instead of an OS release',
  },
  out: {
    type: 'string',
    value: 'DIR',
    help: 'write an OCI image layout to DIR (skopeo copy oci:DIR:TAG … reads it)',
  },
  push: {
    type: 'string',
    value: 'REF',
    help: 'push to REF, host[:port]/repository[:tag] (credentials from $MOLT_REGISTRY_USERNAME and $MOLT_REGISTRY_PASSWORD)',
  },
  insecure: { type: 'boolean', help: 'plain HTTP to the --push registry (loopback registries)' },
  tag: {
    type: 'string',
    value: 'TAG',
    help: 'the name in the layout’s index.json (default: REF’s tag, else molt’s version)',
  },
  source: { type: 'string', value: 'URL', help: 'the org.opencontainers.image.source label' },
  revision: {
    type: 'string',
    value: 'SHA',
    help: 'the org.opencontainers.image.revision label (default: the checkout’s commit, when it has no uncommitted changes)',
  },
  ...Shared,
  help: HelpFlag,
} as const satisfies FlagTable;
