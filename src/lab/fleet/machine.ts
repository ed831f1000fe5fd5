// SPDX-License-Identifier: Apache-2.0
/**
 * Lab machines (docs/adr/0004 §4): a fleet CA with the operator's certificate, and `molt lab
 * machine` processes — firmware, bootloader and agent of one machine each — with the real
 * `molt node` CLI run in-process against their agents. Used by `molt lab`, the demo, the tests and
 * the benchmarks.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { initCaDir, issueToDir } from '../../cli/pki/store.ts';
import { main } from '../../cli/main.ts';
import { memoryIo } from '../../cli/io.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import { eventually, startProcess, type ManagedProcess } from '../../testkit/process.ts';

const repoRoot = join(import.meta.dirname, '../../..');
export const moltEntry = join(repoRoot, 'src/bin/molt.ts');

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

export interface LabMachine {
  readonly root: string;
  readonly process: ManagedProcess;
  /** The agent's endpoint in the current boot (waits for an agent of a boot other than `notBootId`). */
  agent(notBootId?: string): Promise<{ url: string; bootId: string }>;
  molt(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  status(): Promise<AgentStatus>;
  stop(): Promise<void>;
}

export interface LabMachineOptions {
  readonly root: string;
  readonly bootloader: 'grub' | 'systemd-boot';
  readonly pki: FleetPki;
  readonly image: string;
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
}

export function startLabMachine(o: LabMachineOptions): LabMachine {
  const args = [
    moltEntry,
    'lab',
    'machine',
    '--root',
    o.root,
    '--bootloader',
    o.bootloader,
    '--pki',
    o.pki.dir,
  ];
  args.push(
    '--image',
    o.image,
    '--insecure',
    '--health-deadline',
    String(o.healthDeadlineSeconds ?? 8),
  );
  if (o.controlPlane === true) args.push('--control-plane');
  if (o.configFile !== undefined) args.push('--config', o.configFile);
  const [command = process.execPath, ...argv] = [...(o.exec ?? []), process.execPath, ...args];
  const child = startProcess(`lab ${o.root}`, command, argv, {
    env: { ...process.env, ...o.env },
    ...(o.logFile !== undefined && { logFile: o.logFile }),
  });
  const machine: LabMachine = {
    root: o.root,
    process: child,
    agent: (notBootId) =>
      eventually(
        async () => {
          const info = JSON.parse(await readFile(join(o.root, 'run', 'agent.json'), 'utf8')) as {
            url: string;
            bootId: string;
          };
          if (info.bootId === notBootId) throw new Error('still the old boot');
          return info;
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      ),
    async molt(rest) {
      const { url } = await machine.agent();
      const io = memoryIo({ ...o.pki.operatorEnv, MOLT_ENDPOINT: url });
      const code = await main([...rest], io);
      return { code, stdout: io.stdout(), stderr: io.stderr() };
    },
    async status() {
      const r = await eventually(
        async () => {
          const result = await machine.molt(['node', 'status', '-o', 'json']);
          if (result.code !== 0) throw new Error(`status failed: ${result.stderr}`);
          return result;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      return JSON.parse(r.stdout) as AgentStatus;
    },
    stop: () => child.stop(10_000),
  };
  return machine;
}
