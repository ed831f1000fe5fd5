// SPDX-License-Identifier: Apache-2.0
/** The flags of `molt lab …` (src/lab/main.ts, src/lab/usage.ts), declared once (`../flags.ts`). */
import { Bootloaders } from '../../core/boot/bootloaders.ts';
import { HelpFlag, type FlagTable } from '../flags.ts';

const dir = {
  type: 'string',
  value: 'DIR',
  help: 'the lab directory (default .molt/lab)',
} as const;
const output = {
  type: 'string',
  short: 'o',
  value: 'FORMAT',
  default: 'text',
  choices: ['text', 'json'],
  help: 'text or json',
} as const;

/** `molt lab up` (and the daemon it starts, `molt lab run`). */
const up = {
  dir,
  workers: { type: 'string', value: 'N', default: '3', help: 'worker lab machines (default 3)' },
  vms: { type: 'string', value: 'N', default: '0', help: 'QEMU VMs in pool vms (default 0)' },
  'vm-control-planes': {
    type: 'string',
    value: 'M',
    default: '0',
    help: 'the cluster on M control-plane VMs, not on this machine (1 to 3)',
  },
  'no-kubernetes': { type: 'boolean', help: 'no Kubernetes control plane' },
  fast: { type: 'boolean', help: 'short soaks and timeouts' },
  'dashboard-port': {
    type: 'string',
    value: 'PORT',
    default: '0',
    help: 'the dashboard’s port (default: a free one)',
  },
  network: {
    type: 'string',
    value: 'MODE',
    default: 'auto',
    choices: ['auto', 'netns', 'loopback'],
    help: 'auto, netns or loopback',
  },
  operator: {
    type: 'string',
    value: 'WHERE',
    default: 'host',
    choices: ['host', 'cluster'],
    help: 'host (a process) or cluster (pods on the VMs)',
  },
  output,
  help: HelpFlag,
} as const satisfies FlagTable;

const publish = {
  channels: {
    type: 'string',
    value: 'LIST',
    help: 'comma-separated (default stable,beta; vm with --vm)',
  },
  broken: {
    type: 'boolean',
    help: 'a release that never becomes healthy (--vm: its kernel panics)',
  },
  'broken-kubelet': { type: 'boolean', help: 'with --vm: a release whose kubelet cannot start' },
  vm: { type: 'boolean', help: 'a real OS release for the lab’s VMs' },
  dir,
  output,
  help: HelpFlag,
} as const satisfies FlagTable;

const plain = { dir, output, help: HelpFlag } as const satisfies FlagTable;

/** Each verb's flags. */
export const LabVerbFlags = {
  up,
  run: up,
  status: plain,
  env: plain,
  publish,
  down: plain,
} as const satisfies Record<string, FlagTable>;

/** Every verb's flags in one table: what the parser reads before it checks them against the verb. */
export const LabFlags = { ...up, ...publish } as const satisfies FlagTable;

/** `molt lab machine --root DIR`: one lab machine under molt's firmware. */
export const LabMachineFlags = {
  root: {
    type: 'string',
    value: 'DIR',
    help: 'the machine’s root directory (ESP, slots, EPHEMERAL, STATE)',
  },
  bootloader: {
    type: 'string',
    value: 'NAME',
    default: 'grub',
    choices: Bootloaders,
    help: 'grub (default) or systemd-boot',
  },
  image: { type: 'string', value: 'REF', help: 'installer image for the first install of slot A' },
  insecure: { type: 'boolean', help: 'plain-HTTP registry (loopback labs)' },
  pki: {
    type: 'string',
    value: 'DIR',
    help: 'fleet CA (molt pki init) to issue the node certificate from',
  },
  'control-plane': {
    type: 'boolean',
    help: 'a control-plane machine (needs --config with an etcd section)',
  },
  config: { type: 'string', value: 'FILE', help: 'install FILE as state/config.yaml' },
  node: { type: 'string', value: 'NAME', help: 'node name (default: the root directory’s name)' },
  'health-deadline': {
    type: 'string',
    value: 'SECS',
    default: '20',
    help: 'how long a new slot has to become healthy (default 20)',
  },
  'api-port': {
    type: 'string',
    value: 'PORT',
    default: '0',
    help: 'the agent’s port (default: a free port chosen once)',
  },
  help: HelpFlag,
} as const satisfies FlagTable;
