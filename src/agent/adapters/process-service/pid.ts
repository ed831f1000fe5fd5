// SPDX-License-Identifier: Apache-2.0
/**
 * PID-file, /proc and port helpers for services run as detached processes (etcd, a hosted
 * kube-apiserver). A PID alone can be reused after a reboot or
 * a crash, so a PID only counts as "our etcd" when /proc shows the etcd binary with our data dir.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { open, readFile, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileAtomic } from '../fs/atomic-write.ts';

export async function readPidFile(path: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt((await readFile(path, 'utf8')).trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export async function writePidFile(path: string, pid: number): Promise<void> {
  await writeFileAtomic(path, `${pid}\n`);
}

export async function removePidFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

/**
 * Whether `pid` still exists as a process that can hold etcd's ports and data-dir lock. A zombie
 * (exited, not yet reaped by its parent) holds neither, so it counts as gone.
 */
export async function pidAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The state follows the parenthesised command name, which may itself contain ') '.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** True when `pid` runs the binary `binary` with `--data-dir=<dataDir>` (survives PID reuse). */
export async function isEtcdProcess(
  pid: number,
  binary: string,
  dataDir: string,
): Promise<boolean> {
  let argv: string[];
  try {
    argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
  } catch {
    return false;
  }
  const exe = argv[0];
  return (
    exe !== undefined &&
    basename(exe) === basename(binary) &&
    argv.includes(`--data-dir=${dataDir}`) &&
    (await pidAlive(pid))
  );
}

/** Poll until `pid` is gone; false if it still lives after `timeoutMs`. */
export async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (!(await pidAlive(pid))) return true;
    if (performance.now() >= deadline) return false;
    await sleep(50);
  }
}

/** Send `signal` to `pid`; false if the process no longer exists. */
export function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}

/**
 * Start `binary` detached (it outlives an agent restart in the same boot), its output appended to
 * `logFile`, its PID written to `pidFile` once it runs; resolves with the PID.
 */
export async function spawnDetached(o: {
  readonly binary: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly pidFile: string;
  readonly env?: NodeJS.ProcessEnv;
}): Promise<number> {
  const log = await open(o.logFile, 'a');
  try {
    const child = spawn(o.binary, [...o.args], {
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
      ...(o.env !== undefined && { env: o.env }),
    });
    child.unref();
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => {
        resolve(child.pid ?? -1);
      });
      child.once('error', reject);
    });
    await writePidFile(o.pidFile, pid);
    return pid;
  } finally {
    await log.close();
  }
}

/** Whether something accepts TCP connections at `url`'s host and port (500 ms to answer). */
export function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.setTimeout(500);
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => {
      done(true);
    });
    socket.once('error', () => {
      done(false);
    });
    socket.once('timeout', () => {
      done(false);
    });
  });
}
