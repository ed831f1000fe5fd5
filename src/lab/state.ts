// SPDX-License-Identifier: Apache-2.0
/**
 * `<lab dir>/lab.json`: what a running lab is made of (written by the lab daemon once everything
 * is up, read by `molt lab status|env|down|publish`). Written atomically (rename) so a reader never
 * sees half a file.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../core/errors.ts';

/** A VM of the lab (src/lab/vm): enough to show it and to stop it by PID after the daemon died. */
export const LabVmRecord = z.object({
  name: z.string(),
  /** QEMU's PID (of the current power-on). */
  pid: z.number().int(),
  /** The VM's directory: disk state, EFI variables, `serial.log`, `qmp.sock`. */
  dir: z.string(),
  /** The serial console, appended across power-ons. */
  serialLog: z.string(),
  accel: z.enum(['kvm', 'tcg']),
  /** The agent's port on 127.0.0.1, forwarded to the guest's agent port. */
  agentPort: z.number().int(),
  /** The agent as the operator reaches it. */
  endpoint: z.string(),
});
export type LabVmRecord = z.infer<typeof LabVmRecord>;

export const LabState = z.object({
  pid: z.number().int(),
  state: z.enum(['starting', 'ready', 'failed']),
  startedAt: z.string(),
  dir: z.string(),
  registry: z.string(),
  repository: z.string(),
  operator: z.object({
    api: z.string(),
    dashboard: z.string(),
    /** The dashboard user the lab configures (an admin), and the file holding its token. */
    dashboardUser: z.string().optional(),
    dashboardToken: z.string().optional(),
  }),
  /** The fleet CA and the operator's client certificate (what `molt lab env` points at). */
  pki: z.string(),
  /** Loopback ports, or a bridge with a namespace per machine (lab/fleet/network.ts). */
  network: z
    .object({
      mode: z.enum(['loopback', 'netns']),
      bridge: z.string().optional(),
      subnet: z.string().optional(),
      namespaces: z.array(z.string()).optional(),
    })
    .optional(),
  /** The admin kubeconfig, when the lab runs Kubernetes. */
  kubeconfig: z.string().optional(),
  /** kubectl, built with the control plane. */
  kubectl: z.string().optional(),
  /**
   * A cluster on control-plane VMs (`--vm-control-planes`): the control plane's binaries every
   * VM release carries (`molt lab publish --vm` builds them in too).
   */
  controlPlaneImage: z.string().optional(),
  machines: z.array(
    z.object({ id: z.string(), role: z.string(), pool: z.string(), endpoint: z.string() }),
  ),
  /** Machines that are VMs booting from a disk molt installed (`molt lab up --vms N`). */
  vms: z.array(LabVmRecord).optional(),
});
export type LabState = z.infer<typeof LabState>;

export const labFile = (dir: string): string => join(dir, 'lab.json');

/**
 * `<lab dir>/daemon.pid`: the daemon's PID from the moment `molt lab up` spawns it, before
 * `lab.json` exists, so `molt lab down` can stop a lab that is still starting.
 */
const daemonPidFile = (dir: string): string => join(dir, 'daemon.pid');

export async function writeDaemonPid(dir: string, pid: number): Promise<void> {
  await writeFile(`${daemonPidFile(dir)}.tmp`, `${String(pid)}\n`);
  await rename(`${daemonPidFile(dir)}.tmp`, daemonPidFile(dir));
}

export async function removeDaemonPid(dir: string): Promise<void> {
  await rm(daemonPidFile(dir), { force: true });
}

/**
 * The PID of the lab daemon of `dir` when one runs (starting or ready), else undefined. The PID
 * counts only while its process is still `molt lab run --dir <dir>`: a stale file's PID may
 * belong to anything by now, and nothing else may be signalled.
 */
export async function runningDaemon(dir: string): Promise<number | undefined> {
  const text = await readFile(daemonPidFile(dir), 'utf8').catch(() => undefined);
  const pid = text === undefined ? NaN : Number(text.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const args = await readFile(`/proc/${String(pid)}/cmdline`, 'utf8').catch(() => '');
  const argv = args.split('\0');
  const at = argv.indexOf('run');
  const ours = at > 0 && argv[at - 1] === 'lab' && argv[argv.indexOf('--dir') + 1] === dir;
  return ours ? pid : undefined;
}

export async function writeLabState(dir: string, state: LabState): Promise<void> {
  const file = labFile(dir);
  await writeFile(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

export async function removeLabState(dir: string): Promise<void> {
  await rm(labFile(dir), { force: true });
}

/** `lab.json` in `dir` whether or not its daemon still runs, or undefined when there is none. */
export async function readLabStateFile(dir: string): Promise<LabState | undefined> {
  const text = await readFile(labFile(dir), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = LabState.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new MoltError(ErrorCode.BadInput, `${labFile(dir)} is not a lab state file`, {
      hint: 'remove it, or pass --dir to a lab directory',
    });
  return parsed.data;
}

/** The running lab in `dir`, or undefined when there is none (no file, or its daemon is gone). */
export async function readLabState(dir: string): Promise<LabState | undefined> {
  const state = await readLabStateFile(dir);
  return state !== undefined && alive(state.pid) ? state : undefined;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The running lab in `dir`; MOLT_LAB_NOT_RUNNING with a hint when there is none. */
export async function requireLab(dir: string): Promise<LabState> {
  const state = await readLabState(dir);
  if (state !== undefined) return state;
  const starting = await runningDaemon(dir);
  if (starting !== undefined)
    throw new MoltError(
      ErrorCode.LabNotRunning,
      `the lab in ${dir} is still starting (PID ${String(starting)})`,
      { hint: `follow ${join(dir, 'logs', 'lab.log')}, or stop it with \`molt lab down\`` },
    );
  throw new MoltError(ErrorCode.LabNotRunning, `no lab is running in ${dir}`, {
    hint: 'start one with `molt lab up` (or pass --dir)',
  });
}

/** How to sign in to a lab's dashboard, for people: a line, or nothing for an older lab. */
export function signInLine(state: Pick<LabState, 'operator'>): string | undefined {
  const { dashboardUser, dashboardToken } = state.operator;
  if (dashboardUser === undefined || dashboardToken === undefined) return undefined;
  return `sign in as ${dashboardUser} (admin) with the token in ${dashboardToken} to act from the page`;
}
