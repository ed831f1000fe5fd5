// SPDX-License-Identifier: Apache-2.0
/**
 * `molt lab up|run|down|env` (docs/adr/0007; `status` is status.ts, `publish` publish.ts): keep a lab running between commands.
 * `up` starts the lab daemon (`run`) detached, shows its progress from its log, and returns once
 * `lab.json` says it is ready; `down` stops it by the PID there.
 */
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, errorMessage, isMoltError, MoltError } from '../core/errors.ts';
import { removeNetwork } from './fleet/network.ts';
import type { LabIo } from './io.ts';
import { progressPrinter } from './progress.ts';
import { startLab, type LabOptions } from './lab.ts';
import {
  alive,
  readLabState,
  readLabStateFile,
  removeDaemonPid,
  removeLabState,
  requireLab,
  runningDaemon,
  writeDaemonPid,
  type LabState,
} from './state.ts';
import { stopLabVms } from './vm/lab-vm.ts';
import { LabAdmin } from './fleet/operator-pki.ts';
import {
  labContextName,
  removeLabContext,
  saveLabContext,
  type LabContextNote,
} from './context.ts';

const tty = process.stdout.isTTY;
const dim = (s: string): string => (tty ? `\x1b[2m${s}\x1b[0m` : s);

export const defaultLabDir = (): string => resolve('.molt', 'lab');

function labArgs(o: LabOptions): string[] {
  return [
    '--dir',
    o.dir,
    '--workers',
    String(o.workers),
    '--vms',
    String(o.vms),
    '--vm-control-planes',
    String(o.vmControlPlanes ?? 0),
    ...(o.kubernetes ? [] : ['--no-kubernetes']),
    ...(o.fast ? ['--fast'] : []),
    '--dashboard-port',
    String(o.dashboardPort),
    '--network',
    o.network,
    ...(o.operator === 'cluster' ? ['--operator', 'cluster'] : []),
  ];
}

/** Lines appended to `file` since `offset`, and the new offset. */
async function newLines(file: string, offset: number): Promise<[string[], number]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  if (text.length <= offset) return [[], offset];
  const fresh = text.slice(offset);
  const end = fresh.lastIndexOf('\n') + 1;
  return [
    fresh
      .slice(0, end)
      .split('\n')
      .filter((l) => l.startsWith('molt lab: ')),
    offset + end,
  ];
}

/**
 * What a stopped or killed daemon left behind: its VMs, its state file, its namespaces and bridge,
 * and its machines' directory (kept at `down` to be looked at; a new lab makes a new fleet, PKI
 * included, and refuses to overwrite an old CA — `up` after `down` failed with MOLT_PKI_INVALID).
 */
async function clearLeftovers(dir: string): Promise<void> {
  await stopLabVms((await readLabStateFile(dir))?.vms ?? []);
  await removeLabState(dir);
  await removeDaemonPid(dir);
  await removeNetwork(dir);
  await rm(join(dir, 'fleet'), { recursive: true, force: true });
}

/** Start `molt lab run` detached, its output appended to `logs/lab.log` from `offset` on. */
async function spawnDaemon(
  o: LabOptions,
): Promise<{ pid: number; logFile: string; offset: number }> {
  const { molt } = o;
  await mkdir(join(o.dir, 'logs'), { recursive: true });
  const logFile = join(o.dir, 'logs', 'lab.log');
  const log = await open(logFile, 'a');
  const offset = (await log.stat()).size;
  const child = spawn(
    molt[0] ?? process.execPath,
    [...molt.slice(1), 'lab', 'run', ...labArgs(o)],
    { detached: true, stdio: ['ignore', log.fd, log.fd] },
  );
  child.unref();
  await log.close();
  if (child.pid !== undefined) await writeDaemonPid(o.dir, child.pid);
  return { pid: child.pid ?? -1, logFile, offset };
}

/** A lab that came up, and what became of its `lab` context (context.ts). */
export type LabUp = LabState & { readonly context: LabContextNote };

/**
 * Start the daemon and follow its progress until the lab is ready (or the daemon gave up); then
 * write the `lab` context of the CLI config.
 */
export async function labUp(o: LabOptions, io: LabIo): Promise<LabUp> {
  const state = await startDaemon(o, io);
  return { ...state, context: await saveLabContext(state, io.env ?? process.env) };
}

async function startDaemon(o: LabOptions, io: LabIo): Promise<LabState> {
  const running = (await readLabState(o.dir))?.pid ?? (await runningDaemon(o.dir));
  if (running !== undefined)
    throw new MoltError(
      ErrorCode.LabRunning,
      `a lab is already running in ${o.dir} (PID ${String(running)})`,
      {
        hint: 'see it with `molt lab status`, or stop it with `molt lab down`',
      },
    );
  await clearLeftovers(o.dir);
  const { pid, logFile, offset } = await spawnDaemon(o);
  const started = performance.now();
  io.err(dim(`molt lab: daemon PID ${String(pid)}, log ${logFile}\n`));
  let at = offset;
  const progress = progressPrinter(io, started);
  for (;;) {
    const [lines, next] = await newLines(logFile, at);
    at = next;
    progress.show(lines.map((l) => l.slice('molt lab: '.length)));
    const state = await readLabState(o.dir);
    if (state?.state === 'ready') return progress.done(state);
    if (!alive(pid)) {
      progress.done(undefined);
      const tail = (await readFile(logFile, 'utf8').catch(() => '')).slice(offset).slice(-3000);
      throw new MoltError(ErrorCode.LabFailed, `the lab did not come up:\n${tail}`, {
        hint: `see ${logFile} and the machines' logs next to it`,
      });
    }
    await sleep(500);
  }
}

/**
 * What `molt lab up` shows of the daemon's log is the code and what did not come up, never a stack
 * trace: the CLI prints one for any error that is not a MoltError.
 */
function labFailure(e: unknown): MoltError {
  if (isMoltError(e)) return e;
  const why = errorMessage(e);
  return new MoltError(ErrorCode.LabFailed, `the lab did not come up: ${why}`, { cause: e });
}

/**
 * The daemon: start the lab, keep it until SIGTERM/SIGINT, then stop everything. A signal while
 * it starts ends the start at its next step and stops what was started (`molt lab down` of a lab
 * that is not up yet).
 */
export async function labRun(o: LabOptions, io: LabIo): Promise<number> {
  const log = (line: string): void => {
    io.out(`molt lab: ${line}\n`);
  };
  const stopping = new AbortController();
  const signalled = new Promise<string>((done) => {
    for (const s of ['SIGTERM', 'SIGINT'] as const)
      process.once(s, () => {
        done(s);
        stopping.abort(new MoltError(ErrorCode.LabFailed, `stopped by ${s} while starting`));
      });
  });
  let lab;
  try {
    lab = await startLab(o, log, stopping.signal);
  } catch (e) {
    if (!stopping.signal.aborted) throw labFailure(e);
    log(`${await signalled}: stopped before the lab was up; everything it had started is stopped`);
    await removeDaemonPid(o.dir);
    return 0;
  }
  log(`ready: dashboard ${lab.state.operator.dashboard}`);
  log(`${await signalled}: stopping the lab`);
  await lab.stop();
  await removeLabState(o.dir);
  await removeDaemonPid(o.dir);
  log('stopped');
  return 0;
}

/**
 * What a lab whose daemon is gone left behind: its netns network and, if the daemon was killed
 * (SIGKILL, OOM), its VMs (QEMU does not die with its parent). Undefined when there was nothing.
 */
async function clearStoppedLab(dir: string): Promise<{ text: string; result: object } | undefined> {
  const vms = await stopLabVms((await readLabStateFile(dir))?.vms ?? []);
  const networkRemoved = await removeNetwork(dir);
  if (!networkRemoved && vms.length === 0) return undefined;
  await removeLabState(dir);
  const what = [...(networkRemoved ? ['its network'] : []), ...vms.map((v) => `VM ${v}`)];
  return {
    text: `removed what a stopped lab in ${dir} left behind: ${what.join(', ')}`,
    result: { stopped: false, networkRemoved, vmsStopped: vms },
  };
}

/**
 * Stop a daemon that is still starting: it ends its start at the next step and stops what it
 * started, which may take a VM's boot; after 10 min it is killed and what it left is cleared.
 */
async function stopStartingDaemon(dir: string, pid: number, io: LabIo): Promise<void> {
  io.err(dim(`molt lab: the lab is still starting; stopping it (PID ${String(pid)})\n`));
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 1200 && alive(pid); i++) await sleep(500);
  if (alive(pid)) {
    process.kill(pid, 'SIGKILL');
    await clearStoppedLab(dir);
    throw new MoltError(
      ErrorCode.LabFailed,
      `the starting lab daemon (PID ${String(pid)}) did not stop in 10 min; killed`,
      { hint: `its machines may still run: see ${join(dir, 'logs')}` },
    );
  }
  await removeDaemonPid(dir);
  await removeNetwork(dir);
}

export async function labDown(dir: string, io: LabIo, json = false): Promise<number> {
  const say = async (text: string, result: object): Promise<number> => {
    const file = await removeLabContext(dir, io.env ?? process.env);
    const removed = file === undefined ? '' : `; context ${labContextName} removed from ${file}`;
    const context = file === undefined ? {} : { contextRemoved: labContextName };
    io.out(json ? `${JSON.stringify({ dir, ...result, ...context })}\n` : `${text}${removed}\n`);
    return 0;
  };
  if ((await readLabState(dir)) === undefined) {
    const starting = await runningDaemon(dir);
    if (starting !== undefined) {
      await stopStartingDaemon(dir, starting, io);
      return say(`lab in ${dir} stopped before it was up`, { stopped: true, pid: starting });
    }
    const left = await clearStoppedLab(dir);
    if (left !== undefined) return say(left.text, left.result);
  }
  const state = await requireLab(dir);
  process.kill(state.pid, 'SIGTERM');
  for (let i = 0; i < 240 && alive(state.pid); i++) await sleep(500);
  if (alive(state.pid)) {
    process.kill(state.pid, 'SIGKILL');
    await stopLabVms(state.vms ?? []);
    throw new MoltError(
      ErrorCode.LabFailed,
      `the lab daemon (PID ${String(state.pid)}) did not stop in 2 min; killed`,
      {
        hint: `its machines may still run: see ${join(dir, 'logs')}`,
      },
    );
  }
  // The daemon stops its VMs; any it could not (killed mid-way) are stopped here by PID.
  const vms = await stopLabVms(state.vms ?? []);
  await removeLabState(dir);
  await removeDaemonPid(dir);
  await removeNetwork(dir);
  return say(`lab in ${dir} stopped`, { stopped: true, pid: state.pid, vmsStopped: vms });
}

export async function labEnv(dir: string, io: LabIo, json = false): Promise<number> {
  const s = await requireLab(dir);
  const vars = {
    MOLT_OPERATOR: s.operator.api,
    MOLT_CA: join(s.pki, 'ca.pem'),
    MOLT_CERT: join(s.pki, LabAdmin.cert),
    MOLT_KEY: join(s.pki, LabAdmin.key),
    // kubectl's discovery cache is keyed by host:port, which a new lab may reuse: a stale cache
    // would hide molt's CRDs (`kubectl get molt`), so each lab gets its own.
    ...(s.kubeconfig !== undefined && {
      KUBECONFIG: s.kubeconfig,
      KUBECACHEDIR: join(s.dir, 'kube-cache'),
    }),
  };
  if (json) io.out(`${JSON.stringify(vars, null, 2)}\n`);
  else for (const [k, v] of Object.entries(vars)) io.out(`export ${k}=${v}\n`);
  return 0;
}
