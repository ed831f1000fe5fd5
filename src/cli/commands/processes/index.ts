// SPDX-License-Identifier: Apache-2.0
/**
 * The verbs that are processes of their own — `molt agent`, `molt operator`, `molt lab …`,
 * `molt image build`, `molt install` — as commander commands, so `molt --help` lists them and
 * `molt completion` completes their subverbs and flags. They never run here: src/bin/molt.ts hands
 * these verbs (and `molt help <verb>`) to their own composition roots before the CLI loads, and
 * each prints its own usage on `--help`. Their flags come from the tables each process parses with
 * (`protocol/process-flags/`), so what is listed here is what the process takes.
 */
import { Command, Option } from 'commander';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { commanderFlags, type FlagTable } from '../../../protocol/flags.ts';
import {
  AgentFlags,
  AgentInstallFlags,
  OperatorFlags,
} from '../../../protocol/process-flags/daemons.ts';
import { ImageBuildFlags, OperatorImageFlags } from '../../../protocol/process-flags/image.ts';
import { InstallFlags } from '../../../protocol/process-flags/install.ts';
import { LabMachineFlags, LabVerbFlags } from '../../../protocol/process-flags/lab.ts';

/** A process verb: its flags (the process's own table) and its subverbs. */
interface ProcessSpec {
  readonly name: string;
  readonly args?: string;
  readonly description: string;
  readonly flags?: FlagTable;
  readonly verbs?: readonly ProcessSpec[];
}

const lab: ProcessSpec = {
  name: 'lab',
  description: 'a whole fleet on this machine: lab up|status|env|publish|down, lab machine',
  verbs: [
    {
      name: 'up',
      description: 'start a lab (registry, Kubernetes, machines, operator) and keep it running',
      flags: LabVerbFlags.up,
    },
    { name: 'status', description: 'the lab’s parts and its fleet', flags: LabVerbFlags.status },
    {
      name: 'env',
      description: 'variables for molt rollout|machine: eval "$(molt lab env)"',
      flags: LabVerbFlags.env,
    },
    {
      name: 'publish',
      args: '<version>',
      description: 'push a release into the lab’s registry for the operator to roll out',
      flags: LabVerbFlags.publish,
    },
    { name: 'down', description: 'stop the lab', flags: LabVerbFlags.down },
    {
      name: 'machine',
      description: 'one lab machine under molt’s firmware (molt lab machine --help)',
      flags: LabMachineFlags,
    },
  ],
};

const processes: readonly ProcessSpec[] = [
  {
    name: 'agent',
    description: 'the node agent: owns a machine’s A/B slots (molt agent --help)',
    flags: AgentFlags,
    verbs: [
      {
        name: 'install',
        description: 'write the first release into slot A of an empty machine',
        flags: AgentInstallFlags,
      },
    ],
  },
  {
    name: 'operator',
    description: 'the fleet operator (molt operator --help)',
    flags: OperatorFlags,
  },
  lab,
  {
    name: 'image',
    description: 'build OS releases: image build (molt image build --help)',
    verbs: [
      {
        name: 'build',
        description: 'build an OS release from Debian packages',
        flags: { ...ImageBuildFlags, ...OperatorImageFlags },
      },
    ],
  },
  {
    name: 'install',
    description: 'install molt onto a disk or disk image (molt install --help)',
    flags: InstallFlags,
  },
];

function build(spec: ProcessSpec, parent = 'molt'): Command {
  const path = `${parent} ${spec.name}`;
  const cmd = new Command(spec.name).description(spec.description);
  if (spec.args !== undefined) cmd.argument(spec.args);
  for (const [flags, description, choices] of commanderFlags(spec.flags ?? {})) {
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
