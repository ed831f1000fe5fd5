// SPDX-License-Identifier: Apache-2.0
/** The flags of `molt install` (src/image/install/command.ts), declared once (`../flags.ts`). */
import { Bootloaders } from '../../core/boot/bootloaders.ts';
import { HelpFlag, type FlagTable } from '../flags.ts';

export const InstallFlags = {
  disk: {
    type: 'string',
    value: 'FILE|DEVICE',
    help: 'the disk to write (a block device needs root)',
  },
  image: {
    type: 'string',
    value: 'REF',
    help: 'installer image, host[:port]/repo:tag or @sha256:…',
  },
  config: {
    type: 'string',
    value: 'FILE',
    help: 'the machine config (state/config.yaml); `disk: {}` is added if missing',
  },
  pki: {
    type: 'string',
    value: 'DIR',
    help: 'ca.pem and the node certificate: node.pem + node.key, or <node>.pem + <node>.key',
  },
  bootloader: {
    type: 'string',
    value: 'B',
    help: 'grub | systemd-boot; must match the config (default: the config’s)',
    choices: Bootloaders,
  },
  'slot-size': {
    type: 'string',
    value: 'SIZE',
    help: 'size of each slot partition (default 1G; the image’s rootfs must fit)',
  },
  'esp-size': {
    type: 'string',
    value: 'SIZE',
    help: 'size of the ESP (default 256M, at least 64M)',
  },
  'state-size': {
    type: 'string',
    value: 'SIZE',
    help: 'size of STATE (default 128M, 1G on a control plane; at least 16M)',
  },
  'disk-size': {
    type: 'string',
    value: 'SIZE',
    help: 'a disk FILE: create it, or extend it, to SIZE (never shrinks)',
  },
  wipe: { type: 'boolean', help: 'replace a partition table or filesystem that is not molt’s' },
  'overwrite-machine': {
    type: 'boolean',
    help: 'replace a machine: molt’s layout whose STATE holds a config, keys, a journal (the machine’s identity and data are lost; --wipe is not enough)',
  },
  insecure: { type: 'boolean', help: 'pull over plain HTTP' },
  'efi-binary': {
    type: 'string',
    value: 'FILE',
    help: 'the bootloader’s EFI binary (default: GRUB built with grub-mkimage, or /usr/lib/systemd/boot/efi/systemd-bootx64.efi)',
  },
  'public-key': {
    type: 'string',
    value: 'FILE',
    help: 'verify the image’s signature with this key here (default: the config’s publicKeyFile)',
  },
  kubeconfig: {
    type: 'string',
    value: 'FILE',
    help: 'the agent’s own kubeconfig (its molt:agent:<node> identity), copied onto STATE where the config’s kubernetes.kubeconfig names (a path under /molt/state/)',
  },
  'kube-pki': {
    type: 'string',
    value: 'DIR',
    help: 'a control-plane machine’s cluster PKI (molt pki kubernetes --out DIR), checked to be the config’s controlPlane.pki.cluster’s, copied onto STATE',
  },
  'work-dir': {
    type: 'string',
    value: 'DIR',
    help: 'where the image is staged before it is written (default: $TMPDIR)',
  },
  'dry-run': { type: 'boolean', help: 'check everything and print the plan; write nothing' },
  json: { type: 'boolean', help: 'print the result as JSON' },
  help: HelpFlag,
} as const satisfies FlagTable;
