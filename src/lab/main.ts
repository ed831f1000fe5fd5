// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of `molt lab …` (STYLE §1: one per process). `molt lab machine` prepares a
 * machine root and runs the firmware supervisor until the machine powers off or the process is
 * stopped. SIGUSR1 cuts the machine's power (kill everything, boot again) for crash tests.
 */
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { superviseMachine } from './firmware/supervisor.ts';
import { initMachine } from './machine-init.ts';

export interface LabIo {
  out(line: string): void;
  err(line: string): void;
}

const machineFlags = {
  root: { type: 'string' },
  bootloader: { type: 'string', default: 'grub' },
  'control-plane': { type: 'boolean', default: false },
  node: { type: 'string' },
  config: { type: 'string' },
  image: { type: 'string' },
  insecure: { type: 'boolean', default: false },
  pki: { type: 'string' },
  'health-deadline': { type: 'string', default: '20' },
  'api-port': { type: 'string', default: '0' },
} as const;

function bad(message: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, { hint: 'run `molt lab machine --help`' });
}

function parseMachine(argv: readonly string[]) {
  const { values } = parseArgs({
    args: [...argv],
    options: machineFlags,
    strict: true,
    allowPositionals: false,
  });
  if (values.root === undefined) throw bad('--root is required');
  const bootloader = values.bootloader as 'grub' | 'systemd-boot';
  if (!['grub', 'systemd-boot'].includes(bootloader)) {
    throw bad(`--bootloader must be grub or systemd-boot, not ${JSON.stringify(bootloader)}`);
  }
  const deadline = Number(values['health-deadline']);
  const port = Number(values['api-port']);
  if (!Number.isInteger(deadline) || deadline <= 0)
    throw bad('--health-deadline must be a positive number of seconds');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw bad('--api-port must be a port number');
  return { ...values, root: values.root, bootloader, deadline, port };
}

const usage = `Usage: molt lab machine --root DIR [options]

Run one lab machine: firmware and bootloader played by molt, the agent booted into the slot the
bootloader chooses, rebooted when it asks. Prepares DIR on first use.

Options:
  --root DIR               the machine's root directory (ESP, slots, EPHEMERAL, STATE)
  --bootloader NAME        grub (default) or systemd-boot
  --image REF              installer image for the first install of slot A
  --insecure               plain-HTTP registry (loopback labs)
  --pki DIR                fleet CA (molt pki init) to issue the node certificate from
  --control-plane          a control-plane machine (needs --config with an etcd section)
  --config FILE            install FILE as state/config.yaml
  --node NAME              node name (default: the root directory's name)
  --health-deadline SECS   how long a new slot has to become healthy (default 20)
  --api-port PORT          the agent's port (default: a free port chosen once)

Signals: SIGTERM/SIGINT shut the machine down; SIGUSR1 cuts its power (crash tests).
`;

export async function runLab(
  argv: readonly string[],
  io: LabIo,
  molt: readonly string[],
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(usage);
    return 0;
  }
  const [verb, ...rest] = argv;
  if (verb !== 'machine')
    throw bad(`unknown lab command ${JSON.stringify(verb ?? '')}; try \`molt lab machine\``);
  let flags: ReturnType<typeof parseMachine>;
  try {
    flags = parseMachine(rest);
  } catch (error) {
    if (error instanceof MoltError) throw error;
    throw bad((error as Error).message);
  }
  await initMachine({
    root: flags.root,
    bootloader: flags.bootloader,
    controlPlane: flags['control-plane'],
    ...(flags.node === undefined ? {} : { node: flags.node }),
    ...(flags.config === undefined ? {} : { configFile: flags.config }),
    ...(flags.pki === undefined ? {} : { pkiDir: flags.pki }),
    ...(flags.image === undefined ? {} : { image: flags.image }),
    insecureRegistry: flags.insecure,
    healthDeadlineSeconds: flags.deadline,
    apiPort: flags.port,
    molt,
  });
  const supervisor = superviseMachine({
    root: flags.root,
    bootloader: flags.bootloader,
    molt,
    env: process.env,
    log: (line) => {
      io.err(`lab firmware: ${line}\n`);
    },
  });
  const stop = (): void => void supervisor.stop();
  const cut = (): void => {
    supervisor.powerCut();
  };
  process.on('SIGTERM', stop).on('SIGINT', stop).on('SIGUSR1', cut);
  try {
    return await supervisor.done;
  } finally {
    process.off('SIGTERM', stop).off('SIGINT', stop).off('SIGUSR1', cut);
  }
}
