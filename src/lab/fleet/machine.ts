// SPDX-License-Identifier: Apache-2.0
/**
 * Lab machines (docs/adr/0004 §4): a fleet CA with the operator's certificate, and `molt lab
 * machine` processes — firmware, bootloader and agent of one machine each — started with the molt
 * the lab itself was started with (`molt` argv), so an installed molt runs installed machines.
 * Used by `molt lab`, the demo, the tests and the benchmarks.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createMtlsFetch } from '../../platform/https/mtls-fetch.ts';
import { initCaDir, issueToDir } from '../../platform/pki/store.ts';
import { startProcess, type ManagedProcess } from '../../platform/process/managed-process.ts';
import { waitReady, type ReadinessOptions } from '../../platform/process/readiness.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import { createAgentClient } from '../../protocol/agent-client.ts';
import { type BootloaderName } from '../../core/boot/bootloaders.ts';

export interface FleetPki {
  readonly dir: string;
  /** Environment that makes `molt node` act as the operator. */
  readonly operatorEnv: Record<string, string>;
}

export async function createFleetPki(dir: string): Promise<FleetPki> {
  await initCaDir(dir);
  await issueToDir({
    caDir: dir,
    outDir: dir,
    role: 'operator',
    name: 'operator',
    sans: [],
    days: 1,
  });
  return {
    dir,
    operatorEnv: {
      MOLT_CERT: join(dir, 'operator.pem'),
      MOLT_KEY: join(dir, 'operator.key'),
      MOLT_CA: join(dir, 'ca.pem'),
    },
  };
}

/** What `molt …` printed, and how it exited. */
export interface MoltRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface LabMachine {
  readonly root: string;
  readonly process: ManagedProcess;
  /** The agent's endpoint in the current boot (waits for an agent of a boot other than `notBootId`). */
  agent(notBootId?: string): Promise<{ url: string; bootId: string }>;
  /** Run `molt ARGS` as the operator against this machine's agent (`MOLT_ENDPOINT` set). */
  molt(args: readonly string[]): Promise<MoltRun>;
  status(): Promise<AgentStatus>;
  stop(): Promise<void>;
}

export interface LabMachineOptions {
  readonly root: string;
  readonly bootloader: BootloaderName;
  readonly pki: FleetPki;
  readonly image: string;
  /** The argv that starts molt: `[node, …/bin/molt.js]`, as the lab was started. */
  readonly molt: readonly string[];
  readonly healthDeadlineSeconds?: number;
  readonly env?: Record<string, string>;
  /** A control-plane machine (`--control-plane`); needs `configFile` with an etcd section. */
  readonly controlPlane?: boolean;
  /** Installed as state/config.yaml (`--config`); set `api.port` there so followers can reconnect. */
  readonly configFile?: string;
  /** Where the machine's firmware and agent output also goes (the lab's `logs/<name>.log`). */
  readonly logFile?: string;
  /** The argv prefix that runs the machine in its network namespace (network.ts); none on loopback. */
  readonly exec?: readonly string[];
  /** The machine's name in errors. @default the root's last component */
  readonly name?: string;
  /** How long a machine that makes no progress is waited for (readiness.ts). @default 60 s quiet */
  readonly readiness?: Pick<ReadinessOptions<unknown>, 'quietMs' | 'limitMs'>;
}

/** Run `molt args` with `env` added; never rejects for a non-zero exit. */
export function runMolt(
  molt: readonly string[],
  args: readonly string[],
  env: Record<string, string>,
): Promise<MoltRun> {
  const [command = process.execPath, ...prefix] = molt;
  return new Promise((resolve) => {
    execFile(
      command,
      [...prefix, ...args],
      { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The agent's status at `url`, asked as the operator. */
export async function agentStatus(pki: FleetPki, url: string): Promise<AgentStatus> {
  const pem = (name: string): Promise<string> => readFile(join(pki.dir, name), 'utf8');
  const mtls = createMtlsFetch({
    ca: await pem('ca.pem'),
    cert: await pem('operator.pem'),
    key: await pem('operator.key'),
  });
  try {
    return await createAgentClient({ baseUrl: url, fetch: mtls.fetch }).status();
  } finally {
    await mtls.close();
  }
}

function machineArgs(o: LabMachineOptions): string[] {
  return [
    ...['lab', 'machine', '--root', o.root, '--bootloader', o.bootloader, '--pki', o.pki.dir],
    ...['--image', o.image, '--insecure'],
    ...['--health-deadline', String(o.healthDeadlineSeconds ?? 8)],
    ...(o.controlPlane === true ? ['--control-plane'] : []),
    ...(o.configFile === undefined ? [] : ['--config', o.configFile]),
  ];
}

export function startLabMachine(o: LabMachineOptions): LabMachine {
  const [command = process.execPath, ...argv] = [...(o.exec ?? []), ...o.molt, ...machineArgs(o)];
  const name = o.name ?? basename(o.root);
  const child = startProcess(name, command, argv, {
    env: { ...process.env, ...o.env },
    ...(o.logFile !== undefined && { logFile: o.logFile }),
  });
  const agentInfo = async (notBootId?: string): Promise<{ url: string; bootId: string }> => {
    const info = JSON.parse(await readFile(join(o.root, 'run', 'agent.json'), 'utf8')) as {
      url: string;
      bootId: string;
    };
    if (info.bootId === notBootId) throw new Error('still the old boot');
    return info;
  };
  // The machine process (firmware, bootloader, agent) is alive and working while it starts: the
  // wait follows its progress, and ends at once, with its last lines, when it exits.
  const ready = <T>(probe: () => Promise<T>): Promise<T> =>
    waitReady({
      what: name,
      processes: [child],
      probe,
      intervalMs: 100,
      ...o.readiness,
    });
  const machine: LabMachine = {
    root: o.root,
    process: child,
    agent: (notBootId) => ready(() => agentInfo(notBootId)),
    async molt(rest) {
      const { url } = await machine.agent();
      return runMolt(o.molt, rest, { ...o.pki.operatorEnv, MOLT_ENDPOINT: url });
    },
    status: () => ready(async () => agentStatus(o.pki, (await agentInfo()).url)),
    stop: () => child.stop(10_000),
  };
  return machine;
}
