// SPDX-License-Identifier: Apache-2.0
import { createWriteStream } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A child process started by a test harness; stopped by its own PID only. */
export interface ManagedProcess {
  readonly pid: number;
  readonly name: string;
  /** Everything the process wrote to stdout and stderr so far (for diagnostics). */
  output(): string;
  /** Resolves with the first match of `pattern` in the output, or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
  readonly exited: Promise<number | null>;
}

/** Options for {@link startProcess}. */
export interface StartOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Also append everything the process prints to this file (the lab's logs). */
  readonly logFile?: string;
}

/** Start `command` with `args`, capturing its output. */
export function startProcess(
  name: string,
  command: string,
  args: readonly string[],
  options: StartOptions = {},
): ManagedProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const listeners = new Set<() => void>();
  let file =
    options.logFile === undefined ? undefined : createWriteStream(options.logFile, { flags: 'a' });
  // A log file that cannot be written (its directory missing, a full disk) must not take this
  // process down with an unhandled 'error', leaving the child running: the output stays in memory.
  file?.once('error', (err) => {
    log += `\n[log file error] ${err.message}`;
    file = undefined;
  });
  const onData = (chunk: Buffer): void => {
    file?.write(chunk);
    log += chunk.toString('utf8');
    if (log.length > 1_000_000) log = log.slice(-500_000);
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      file?.end();
      resolve(code);
      for (const l of listeners) l();
    });
    child.once('error', (err) => {
      log += `\n[spawn error] ${err.message}`;
      resolve(-1);
    });
  });
  return {
    pid: child.pid ?? -1,
    name,
    output: () => log,
    exited,
    waitFor: (pattern, timeoutMs = 20_000) =>
      waitForOutput({ child, name, pattern, timeoutMs, listeners, log: () => log }),
    stop: (graceMs = 5_000) => stopChild(child, exited, graceMs),
  };
}

interface WaitArgs {
  readonly child: ChildProcess;
  readonly name: string;
  readonly pattern: RegExp;
  readonly timeoutMs: number;
  readonly listeners: Set<() => void>;
  readonly log: () => string;
}

function waitForOutput(a: WaitArgs): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const m = a.pattern.exec(a.log());
      if (m) {
        done();
        resolve(m);
      } else if (a.child.exitCode !== null || a.child.signalCode !== null) {
        done();
        reject(
          new Error(`${a.name} exited before printing ${a.pattern}:\n${a.log().slice(-4000)}`),
        );
      }
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${a.name}: timed out waiting for ${a.pattern}:\n${a.log().slice(-4000)}`));
    }, a.timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      a.listeners.delete(check);
    };
    a.listeners.add(check);
    check();
  });
}

async function stopChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  graceMs: number,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGKILL');
    }
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

/** A fresh temporary directory, and a function that removes it. */
export async function tempDir(
  prefix: string,
): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `molt-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/**
 * Poll `fn` until it returns without throwing, or rethrow its last error after `timeoutMs`; an
 * aborted `signal` ends the wait at the next poll with the signal's reason.
 */
export async function eventually<T>(
  fn: () => Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; signal?: AbortSignal | undefined } = {},
): Promise<T> {
  const deadline = performance.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      return await fn();
    } catch (e) {
      if (performance.now() > deadline || options.signal?.aborted === true) throw e;
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
    }
  }
}
