// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of `molt lab …` (STYLE §1: one per process). `molt lab machine` prepares a
 * machine root and runs the firmware supervisor until the machine powers off or the process is
 * stopped; SIGUSR1 cuts the machine's power (kill everything, boot again) for crash tests.
 * `molt lab up|down|status|env|publish` keep a whole lab running (commands.ts, docs/adr/0007).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { superviseMachine } from './firmware/supervisor.ts';
import { chooseNetworkMode, parseNetworkFlag } from './fleet/network.ts';
import { initMachine } from './machine-init.ts';
import { defaultLabDir, labDown, labEnv, labRun, labUp } from './commands.ts';
import type { LabIo } from './io.ts';
import { describeLabUp } from './context.ts';
import type { LabOptions } from './lab.ts';
import { labPublish } from './publish.ts';
import { labStatus } from './status.ts';
import { labUsage, labVerbUsage, machineUsage as usage } from './usage.ts';
import { missingForVmPods, operatorPlace } from './lab-cluster-operator.ts';
import { Bootloaders, isBootloader } from '../core/boot/bootloaders.ts';
import { foreignFlag, parseOptions, type FlagTable } from '../protocol/flags.ts';
import { LabFlags, LabMachineFlags, LabVerbFlags } from '../protocol/process-flags/lab.ts';

export type { LabIo } from './io.ts';

function bad(message: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, { hint: 'run `molt lab machine --help`' });
}

function parseMachine(argv: readonly string[]) {
  const { values } = parseArgs({
    args: [...argv],
    options: parseOptions(LabMachineFlags),
    strict: true,
    allowPositionals: false,
  });
  if (values.root === undefined) throw bad('--root is required');
  const bootloader = values.bootloader;
  if (!isBootloader(bootloader))
    throw bad(
      `--bootloader must be ${Bootloaders.join(' or ')}, not ${JSON.stringify(bootloader)}`,
    );
  const deadline = Number(values['health-deadline']);
  const port = Number(values['api-port']);
  if (!Number.isInteger(deadline) || deadline <= 0)
    throw bad('--health-deadline must be a positive number of seconds');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw bad('--api-port must be a port number');
  return { ...values, root: values.root, bootloader, deadline, port };
}

/**
 * The flags of `verb`: parsed with every verb's table (one shape of values), then each one given
 * checked to be the verb's own — a flag another verb takes would otherwise be silently ignored.
 */
function parseLab(verb: string, argv: readonly string[]) {
  const hint = { hint: `run \`molt lab ${verb} --help\`` };
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: parseOptions(LabFlags),
      strict: true,
      allowPositionals: true,
      tokens: true,
    });
  } catch (error) {
    throw new MoltError(ErrorCode.BadFlag, (error as Error).message, hint);
  }
  const own: FlagTable | undefined = Object.hasOwn(LabVerbFlags, verb)
    ? LabVerbFlags[verb as keyof typeof LabVerbFlags]
    : undefined;
  const foreign = own === undefined ? undefined : foreignFlag(parsed.tokens, own);
  if (foreign !== undefined)
    throw new MoltError(ErrorCode.BadFlag, `molt lab ${verb} takes no ${foreign}`, hint);
  return parsed;
}

/** A whole number from `min` to `max` given as `flag`, or MOLT_BAD_FLAG with `hint`. */
function countFlag(value: string, flag: string, range: [number, number], hint?: string): number {
  const n = Number(value);
  const [min, max] = range;
  if (Number.isInteger(n) && n >= min && n <= max) return n;
  throw new MoltError(
    ErrorCode.BadFlag,
    `${flag} must be a number from ${String(min)} to ${String(max)}`,
    hint === undefined ? {} : { hint },
  );
}

/**
 * `--vm-control-planes M`: a cluster, worker VMs for its workloads, and the bridge the VMs reach
 * each other on; each a clear refusal.
 */
function vmControlPlaneCount(
  value: string,
  lab: { readonly kubernetes: boolean; readonly vms: number; readonly network: string },
): number {
  const m = countFlag(
    value,
    '--vm-control-planes',
    [0, 3],
    'each control-plane VM takes 3 GiB of memory and, without KVM, most of a core while it boots',
  );
  if (m === 0) return 0;
  const missing = missingForVmPods(lab, 'worker VMs for the workloads: --vms N');
  if (missing !== undefined)
    throw new MoltError(ErrorCode.BadFlag, `--vm-control-planes needs ${missing}`, {
      hint: 'e.g. molt lab up --vms 2 --vm-control-planes 1 --workers 0',
    });
  return m;
}

async function labOptions(
  values: ReturnType<typeof parseLab>['values'],
  molt: readonly string[],
): Promise<LabOptions> {
  const kubernetes = !values['no-kubernetes'];
  const vms = countFlag(
    values.vms,
    '--vms',
    [0, 8],
    'each VM takes 1 GiB of memory (2 GiB as a Kubernetes node) and, without KVM, most of a core while it boots',
  );
  // The workloads need a node: lab workers, or VMs that are nodes.
  const needsWorker = kubernetes && vms === 0;
  const workers = countFlag(
    values.workers,
    '--workers',
    [needsWorker ? 1 : 0, 20],
    needsWorker
      ? 'the workloads need a worker: --workers 0 needs --vms N (real nodes) or --no-kubernetes'
      : undefined,
  );
  const dashboardPort = countFlag(values['dashboard-port'], '--dashboard-port', [0, 65535]);
  const network = await chooseNetworkMode(parseNetworkFlag(values.network));
  const vmControlPlanes = vmControlPlaneCount(values['vm-control-planes'], {
    kubernetes,
    vms,
    network,
  });
  return {
    vmControlPlanes,
    network,
    operator: operatorPlace(values.operator, { kubernetes, vms, network }),
    dir: resolve(values.dir ?? defaultLabDir()),
    workers,
    vms,
    kubernetes,
    fast: values.fast,
    dashboardPort,
    molt,
  };
}

async function runLabVerb(
  verb: string,
  rest: readonly string[],
  io: LabIo,
  molt: readonly string[],
): Promise<number> {
  const { values, positionals } = parseLab(verb, rest);
  if (values.output !== 'text' && values.output !== 'json')
    throw new MoltError(ErrorCode.BadFlag, `-o must be text or json, not ${values.output}`);
  const dir = resolve(values.dir ?? defaultLabDir());
  const json = values.output === 'json';
  switch (verb) {
    case 'up': {
      const state = await labUp(await labOptions(values, molt), io);
      if (json) {
        io.out(`${JSON.stringify(state, null, 2)}\n`);
        return 0;
      }
      io.out(describeLabUp(state));
      return 0;
    }
    case 'run':
      return labRun(await labOptions(values, molt), io);
    case 'down':
      return labDown(dir, io, json);
    case 'status':
      return labStatus(dir, io, json);
    case 'env':
      return labEnv(dir, io, json);
    case 'publish': {
      const version = positionals[0];
      if (version === undefined)
        throw new MoltError(ErrorCode.BadFlag, 'molt lab publish needs a VERSION', {
          hint: labUsage,
        });
      return labPublish(
        dir,
        {
          version,
          channels: values.channels,
          broken: values.broken,
          brokenKubelet: values['broken-kubelet'],
          vm: values.vm,
          molt,
          json,
        },
        io,
      );
    }
    default:
      throw new MoltError(ErrorCode.BadFlag, `unknown lab command ${JSON.stringify(verb)}`, {
        hint: 'molt lab up|down|status|env|publish|kubectl|machine; run `molt lab --help`',
      });
  }
}

/** The usage text `argv` asks for, if it asks. */
function helpFor(verb: string | undefined, rest: readonly string[]): string | undefined {
  const asked = rest.includes('--help') || rest.includes('-h');
  if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help')
    return rest[0] === 'machine' ? usage : (labVerbUsage(rest[0] ?? '') ?? labUsage);
  if (!asked) return undefined;
  return verb === 'machine' ? usage : (labVerbUsage(verb) ?? labUsage);
}

export async function runLab(
  argv: readonly string[],
  io: LabIo,
  molt: readonly string[],
): Promise<number> {
  const [verb, ...rest] = argv;
  // Everything after `kubectl` is kubectl's, `--help` included.
  if (verb === 'kubectl') return (await import('./kubectl.ts')).labKubectl(rest, io);
  const help = helpFor(verb, rest);
  if (help !== undefined) {
    io.out(help);
    return 0;
  }
  if (verb !== 'machine') return runLabVerb(verb ?? '', rest, io, molt);
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
