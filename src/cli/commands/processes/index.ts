// SPDX-License-Identifier: Apache-2.0
/**
 * The verbs that are processes of their own — `molt agent`, `molt operator`, `molt lab …`,
 * `molt image build`, `molt install` — as commander commands, so `molt --help` lists them and
 * `molt completion` completes their subverbs and flags. They never run here: src/bin/molt.ts hands
 * these verbs (and `molt help <verb>`) to their own composition roots before the CLI loads, and
 * each prints its own usage on `--help`. src/bin/processes.test.ts checks that every flag listed
 * here is one the process's usage names, and the other way round.
 */
import { Command, Option } from 'commander';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { Bootloaders } from '../../../core/boot/bootloaders.ts';

/** A process verb: its flags as commander flag strings with a description, and its subverbs. */
interface ProcessSpec {
  readonly name: string;
  readonly args?: string;
  readonly description: string;
  readonly flags?: readonly (readonly [
    flags: string,
    description: string,
    choices?: readonly string[],
  ])[];
  readonly verbs?: readonly ProcessSpec[];
}

const dir = ['--dir <dir>', 'the lab directory (default .molt/lab)'] as const;
const labOutput = ['-o, --output <format>', 'text or json', ['text', 'json']] as const;

const lab: ProcessSpec = {
  name: 'lab',
  description: 'a whole fleet on this machine: lab up|status|env|publish|down, lab machine',
  verbs: [
    {
      name: 'up',
      description: 'start a lab (registry, Kubernetes, machines, operator) and keep it running',
      flags: [
        dir,
        ['--workers <n>', 'worker machines (default 3)'],
        ['--vms <n>', 'QEMU VMs in pool vms (default 0)'],
        ['--vm-control-planes <m>', 'the cluster on M control-plane VMs, not the host (1 to 3)'],
        ['--no-kubernetes', 'no Kubernetes control plane'],
        ['--fast', 'short soaks and timeouts'],
        ['--dashboard-port <port>', 'the dashboard’s port (default: a free one)'],
        ['--network <mode>', 'auto, netns or loopback', ['auto', 'netns', 'loopback']],
        [
          '--operator <where>',
          'host (a process) or cluster (pods on the VMs)',
          ['host', 'cluster'],
        ],
        labOutput,
      ],
    },
    { name: 'status', description: 'the lab’s parts and its fleet', flags: [dir, labOutput] },
    {
      name: 'env',
      description: 'variables for molt rollout|machine: eval "$(molt lab env)"',
      flags: [dir, labOutput],
    },
    {
      name: 'publish',
      args: '<version>',
      description: 'push a release into the lab’s registry for the operator to roll out',
      flags: [
        ['--channels <list>', 'comma-separated (default stable,beta; vm with --vm)'],
        ['--broken', 'a release that never becomes healthy (--vm: its kernel panics)'],
        ['--broken-kubelet', 'with --vm: a release whose kubelet cannot start'],
        ['--vm', 'a real OS release for the lab’s VMs'],
        dir,
        labOutput,
      ],
    },
    { name: 'down', description: 'stop the lab', flags: [dir, labOutput] },
    {
      name: 'machine',
      description: 'one lab machine under molt’s firmware (molt lab machine --help)',
      flags: [
        ['--root <dir>', 'the machine’s root directory'],
        ['--bootloader <name>', 'grub or systemd-boot', [...Bootloaders]],
        ['--image <ref>', 'installer image for the first install of slot A'],
        ['--insecure', 'plain-HTTP registry (loopback labs)'],
        ['--pki <dir>', 'fleet CA to issue the node certificate from'],
        ['--control-plane', 'a control-plane machine'],
        ['--config <file>', 'install FILE as state/config.yaml'],
        ['--node <name>', 'node name'],
        ['--health-deadline <secs>', 'how long a new slot has to become healthy'],
        ['--api-port <port>', 'the agent’s port'],
      ],
    },
  ],
};

const processes: readonly ProcessSpec[] = [
  {
    name: 'agent',
    description: 'the node agent: owns a machine’s A/B slots (molt agent --help)',
    flags: [['--root <dir>', 'the machine’s root directory']],
    verbs: [
      {
        name: 'install',
        description: 'write the first release into slot A of an empty machine',
        flags: [
          ['--root <dir>', 'the machine’s root directory'],
          ['--image <ref>', 'the installer image'],
          ['--insecure', 'plain-HTTP registry'],
        ],
      },
    ],
  },
  {
    name: 'operator',
    description: 'the fleet operator (molt operator --help)',
    flags: [['--config <file>', 'the operator config (YAML)']],
  },
  lab,
  {
    name: 'image',
    description: 'build OS releases: image build (molt image build --help)',
    verbs: [
      {
        name: 'build',
        description: 'build an OS release from Debian packages',
        flags: [
          ['--version <v>', 'the release version (semver)'],
          ['--out <dir>', 'where the artifacts go'],
          ['--overlay <dir>', 'copy DIR’s files over the root (repeatable)'],
          ['--enable <unit>', 'enable a systemd unit (repeatable)'],
          ['--cmdline <args>', 'the image’s kernel arguments'],
          ['--molt-package <tgz>', 'the molt to install'],
          ['--node <file>', 'the Node 24 binary'],
          ['--package <name>', 'an extra Debian package (repeatable)'],
          ['--kernel <flavour>', 'amd64 or cloud', ['amd64', 'cloud']],
          ['--full-modules', 'keep every kernel module'],
          ['--kubernetes-node <dir>', 'a Kubernetes node: containerd, kubelet, CNI plugins'],
          [
            '--kubernetes-control-plane <dir>',
            'a Kubernetes control plane: its components, etcd, kubectl',
          ],
          ['--compression <c>', 'zstd, zstd:LEVEL or xz'],
          ['--mirror <source>', 'apt source (repeatable)'],
          ['--cache <dir>', 'build cache'],
          ['--no-cache', 'rebuild every stage'],
          ['--json', 'print the summary as JSON'],
          ['--verbose', 'show what the tools print'],
          ['--operator', 'build the operator’s container image instead'],
          ['--push <ref>', 'push the operator image to REF'],
          ['--insecure', 'plain HTTP to the --push registry'],
          ['--tag <tag>', 'the name in the OCI layout’s index.json'],
          ['--source <url>', 'the image’s source label'],
          ['--revision <sha>', 'the image’s revision label'],
        ],
      },
    ],
  },
  {
    name: 'install',
    description: 'install molt onto a disk or disk image (molt install --help)',
    flags: [
      ['--disk <file>', 'a disk image file or a block device'],
      ['--image <ref>', 'the installer image for slot A'],
      ['--config <file>', 'the machine config'],
      ['--pki <dir>', 'the fleet CA to issue the node certificate from'],
      ['--bootloader <name>', 'grub or systemd-boot', [...Bootloaders]],
      ['--slot-size <size>', 'size of each slot'],
      ['--esp-size <size>', 'size of the ESP'],
      ['--state-size <size>', 'size of STATE'],
      ['--disk-size <size>', 'size of a new disk image file'],
      ['--efi-binary <file>', 'the systemd-boot EFI binary'],
      ['--public-key <file>', 'require the image signed with this key'],
      ['--kubeconfig <file>', 'the agent’s own kubeconfig, onto STATE'],
      ['--kube-pki <dir>', 'a control-plane machine’s cluster PKI, checked, onto STATE'],
      ['--work-dir <dir>', 'scratch space'],
      ['--wipe', 'replace a partition table that is not molt’s'],
      ['--overwrite-machine', 'replace a machine: a disk whose STATE holds one'],
      ['--insecure', 'plain-HTTP registry'],
      ['--dry-run', 'plan only, write nothing'],
      ['--json', 'print the result as JSON'],
    ],
  },
];

function build(spec: ProcessSpec, parent = 'molt'): Command {
  const path = `${parent} ${spec.name}`;
  const cmd = new Command(spec.name).description(spec.description);
  if (spec.args !== undefined) cmd.argument(spec.args);
  for (const [flags, description, choices] of spec.flags ?? []) {
    const option = new Option(flags, description);
    cmd.addOption(choices === undefined ? option : option.choices(choices));
  }
  for (const verb of spec.verbs ?? []) cmd.addCommand(build(verb, path));
  return cmd.action(() => {
    throw new MoltError(ErrorCode.BadFlag, `${path} runs as a process of its own`, {
      hint: `run it with the molt binary: ${path} --help`,
    });
  });
}

/** The process verbs, for `molt --help` (under "Processes:") and `molt completion`. */
export function processCommands(): Command[] {
  return processes.map((p) => build(p).helpGroup('Processes:'));
}
