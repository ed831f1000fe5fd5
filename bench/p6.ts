// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P6 (docs/adr/0004 §7): the agent's idle resident memory. One worker lab machine
 * (`molt lab machine --bootloader grub`, no control plane) installed from a small installer image
 * in the real docker-registry 2.8 on loopback, with a fleet CA; once its agent is up
 * (`run/agent.json`), one `molt node status` over mTLS (the CLI in-process), then 10 s of idle
 * with VmRSS of the agent process sampled 5 times from /proc/<pid>/status. Reports the maximum
 * for the shipped agent (compiled, `dist/`), and for comparison the agent run from source, where
 * Node's type stripping (a WebAssembly swc) adds about 30 MB. Target: ≤ 80 MB.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { memoryIo } from '../src/cli/io.ts';
import { main } from '../src/cli/main.ts';
import { initCaDir, issueToDir } from '../src/platform/pki/store.ts';
import { createRegistryClient } from '../src/oci/index.ts';
import { pushInstallerImage } from '../src/testkit/installer-image.ts';
import {
  eventually,
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../src/lab/services/registry.ts';

const repoRoot = join(import.meta.dirname, '..');
/** The agent as shipped (`tsc -b` output, package.json `bin`) and as run from source with Node's type stripping. */
const entries = {
  dist: join(repoRoot, 'dist/bin/molt.js'),
  source: join(repoRoot, 'src/bin/molt.ts'),
} as const;
const samples = 5;
const idleMs = 10_000;
const MB = 1024 * 1024;
const run = promisify(execFile);

interface AgentInfo {
  readonly url: string;
  readonly pid: number;
}

interface Fixture {
  readonly registry: RunningRegistry;
  readonly pkiDir: string;
  readonly scratch: string;
}

interface Measured {
  readonly atStart: number;
  readonly afterStatus: number;
  readonly idle: readonly number[];
  readonly anon: number;
  readonly file: number;
  readonly hwm: number;
  readonly supervisor: number;
}

/** A field of /proc/<pid>/status in bytes (`VmRSS`, `VmHWM`, `RssAnon`, …). */
async function procKb(pid: number, field: string): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (m?.[1] === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

async function agentInfo(root: string): Promise<AgentInfo> {
  return eventually(
    async () => JSON.parse(await readFile(join(root, 'run', 'agent.json'), 'utf8')) as AgentInfo,
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

async function statusCall(url: string, pkiDir: string): Promise<void> {
  const env = {
    MOLT_CERT: join(pkiDir, 'operator.pem'),
    MOLT_KEY: join(pkiDir, 'operator.key'),
    MOLT_CA: join(pkiDir, 'ca.pem'),
    MOLT_ENDPOINT: url,
  };
  await eventually(
    async () => {
      const io = memoryIo(env);
      const code = await main(['node', 'status', '-o', 'json'], io);
      if (code !== 0) throw new Error(`molt node status failed: ${io.stderr()}`);
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}

/** Stop the lab machine by its PID, then make sure its agent (a child of it) is gone too. */
async function stopMachine(machine: ManagedProcess, agentPid: number | undefined): Promise<void> {
  await machine.stop(10_000);
  if (agentPid === undefined) return;
  try {
    process.kill(agentPid, 'SIGKILL');
  } catch {
    // already gone, as it should be
  }
}

/** Boot one worker lab machine with `entry` as molt, call status once, sample the agent's RSS while idle. */
async function measureMachine(f: Fixture, name: string, entry: string): Promise<Measured> {
  const root = join(f.scratch, name);
  const args = [
    entry,
    'lab',
    'machine',
    '--root',
    root,
    '--bootloader',
    'grub',
    '--pki',
    f.pkiDir,
    '--image',
    `${f.registry.host}/molt/installer:1.0.0`,
    '--insecure',
  ];
  const machine = startProcess(`lab machine (${name})`, process.execPath, args);
  let agentPid: number | undefined;
  try {
    const agent = await agentInfo(root);
    agentPid = agent.pid;
    const atStart = await procKb(agent.pid, 'VmRSS');
    await statusCall(agent.url, f.pkiDir);
    const afterStatus = await procKb(agent.pid, 'VmRSS');
    const idle: number[] = [];
    for (let i = 0; i < samples; i++) {
      await sleep(idleMs / samples);
      idle.push(await procKb(agent.pid, 'VmRSS'));
    }
    const [anon, file, hwm] = [
      await procKb(agent.pid, 'RssAnon'),
      await procKb(agent.pid, 'RssFile'),
      await procKb(agent.pid, 'VmHWM'),
    ];
    return {
      atStart,
      afterStatus,
      idle,
      anon,
      file,
      hwm,
      supervisor: await procKb(machine.pid, 'VmRSS'),
    };
  } finally {
    await stopMachine(machine, agentPid);
  }
}

const mb = (bytes: number): string => (bytes / MB).toFixed(1);

function table(name: string, m: Measured): string[] {
  const line = (label: string, value: string): string =>
    `${`${name}: ${label}`.padEnd(54)}${value}`;
  return [
    line('agent VmRSS when agent.json appeared', `${mb(m.atStart)} MB`),
    line('agent VmRSS after one status call', `${mb(m.afterStatus)} MB`),
    line('agent VmRSS idle samples', `${m.idle.map(mb).join(' ')} MB`),
    line('agent VmRSS idle max', `${mb(Math.max(...m.idle))} MB`),
    line('agent RssAnon / RssFile at the end', `${mb(m.anon)} / ${mb(m.file)} MB`),
    line('agent VmHWM (peak)', `${mb(m.hwm)} MB`),
    line('lab machine supervisor VmRSS (not the agent)', `${mb(m.supervisor)} MB`),
  ];
}

/** Run P6 and print its table and `BENCH P6 …` line. */
export async function runP6(): Promise<void> {
  // The shipped agent is the compiled one: build it, so the measurement is of the current sources.
  await run(join(repoRoot, 'node_modules/.bin/tsc'), ['-b'], { cwd: repoRoot });
  const registry = await startRegistry();
  const scratch = await tempDir('bench-p6');
  try {
    const pkiDir = join(scratch.path, 'pki');
    await initCaDir(pkiDir);
    await issueToDir({
      caDir: pkiDir,
      outDir: pkiDir,
      role: 'operator',
      name: 'operator',
      sans: [],
      days: 1,
    });
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    await pushInstallerImage(client, 'molt/installer', '1.0.0', { version: '1.0.0' });
    await client.close();
    const f: Fixture = { registry, pkiDir, scratch: scratch.path };
    const dist = await measureMachine(f, 'dist', entries.dist);
    const source = await measureMachine(f, 'source', entries.source);
    const max = Math.max(...dist.idle);
    const lines = [
      `P6: one worker lab machine (grub) per run; after one status call, ${samples} VmRSS samples of the agent over ${idleMs / 1000} s of idle`,
      `dist = the shipped agent (node dist/bin/molt.js, after tsc -b); source = node src/bin/molt.ts (Node type stripping, a development mode)`,
      '',
      ...table('dist', dist),
      ...table('source', source),
      '',
      `idle max (dist): ${mb(max)} MB (target ≤ 80); from source: ${mb(Math.max(...source.idle))} MB`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `BENCH P6 rss_mb=${mb(max)} source_rss_mb=${mb(Math.max(...source.idle))}\n`,
    );
  } finally {
    await registry.stop();
    await scratch.remove();
  }
}
