// SPDX-License-Identifier: Apache-2.0
/**
 * A container as small as a runtime makes one, for running an image's entrypoint as PID 1 without
 * containerd: its layers unpacked by GNU tar (not by the library that wrote them) into a root with
 * the `/dev/null` and `/proc` a runtime provides, started with `unshare --pid --fork --mount-proc
 * --root` (root only). Signals are sent to that PID 1 from the host's namespace, as a runtime's
 * are: the kernel delivers only those the process has a handler for.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  eventually,
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';

const run = promisify(execFile);

/** Unpack gzip tar layers, in order, into `root`, and add what a runtime mounts there. */
export async function unpackRoot(root: string, layers: readonly Uint8Array[]): Promise<void> {
  await mkdir(root, { recursive: true });
  for (const [i, layer] of layers.entries()) {
    const file = join(root, `..layer-${String(i)}.tar.gz`);
    await writeFile(file, layer);
    await run('tar', ['-xzf', file, '-C', root, '--numeric-owner', '--same-permissions']);
    await run('rm', ['-f', file]);
  }
  await mkdir(join(root, 'proc'), { recursive: true });
  await mkdir(join(root, 'dev'), { recursive: true });
  await run('mknod', ['-m', '666', join(root, 'dev', 'null'), 'c', '1', '3']);
}

/** An entrypoint running as PID 1 of a PID namespace of its own. */
export interface Pid1 {
  /** `unshare`, which exits with PID 1's status when PID 1 exits. */
  readonly proc: ManagedProcess;
  /** PID 1's PID in the host's namespace. */
  readonly pid: number;
  /** The host PIDs of PID 1's children. */
  children(): Promise<number[]>;
  /** SIGKILL PID 1 (the kernel then kills the rest of its namespace) and wait for the exit. */
  kill(): Promise<void>;
}

const childrenOf = async (pid: number): Promise<number[]> =>
  (await readFile(`/proc/${String(pid)}/task/${String(pid)}/children`, 'utf8'))
    .split(' ')
    .filter((s) => s !== '')
    .map(Number);

/** Run `argv` (an image's entrypoint and cmd) in `root` as PID 1, with the image's `env`. */
export async function startPid1(
  root: string,
  argv: readonly string[],
  env: readonly string[],
): Promise<Pid1> {
  const proc = startProcess(
    'pid1',
    // By path: the image's PATH (/bin) is the environment, and unshare must be found before it applies.
    '/usr/bin/unshare',
    ['--pid', '--fork', '--mount-proc', `--root=${root}`, '--', ...argv],
    {
      env: Object.fromEntries(
        env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
      ),
    },
  );
  const pid = await eventually(
    async () => {
      const [first] = await childrenOf(proc.pid);
      if (first === undefined) throw new Error(`unshare has not forked yet: ${proc.output()}`);
      return first;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
  return {
    proc,
    pid,
    children: () => childrenOf(pid).catch(() => []),
    async kill() {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await proc.exited;
    },
  };
}

/** Milliseconds until `p` exits, or undefined if it is still running after `withinMs`. */
export async function exitsWithin(p: Pid1, withinMs: number): Promise<number | undefined> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, withinMs);
  });
  const exited = await Promise.race([p.proc.exited.then(() => true), timeout]);
  clearTimeout(timer);
  return exited ? performance.now() - start : undefined;
}
