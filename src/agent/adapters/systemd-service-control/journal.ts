// SPDX-License-Identifier: Apache-2.0
/**
 * `journalctl` as a line stream: argument arrays (unit names never pass through a shell), stdout
 * read line by line, the child killed when the caller's signal aborts or the reader stops early
 * (a client that leaves a followed log).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ErrorCode, MoltError } from '../../../core/errors.ts';

/** Runs journalctl with `args`; yields its output lines until it ends or `signal` aborts. */
export type JournalReader = (args: readonly string[], signal: AbortSignal) => AsyncIterable<string>;

/** @param binary the journalctl to run. */
export function createJournalReader(binary = 'journalctl'): JournalReader {
  return async function* read(args, signal) {
    const child = spawn(binary, [...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SYSTEMD_PAGER: '', SYSTEMD_COLORS: '0', LC_ALL: 'C' },
    });
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (e) => {
        reject(
          new MoltError(ErrorCode.ToolMissing, `cannot run ${binary}: ${e.message}`, {
            hint: 'the machine’s logs are in the systemd journal; is journalctl installed?',
          }),
        );
      });
    });
    failed.catch(() => undefined);
    const stop = (): void => {
      child.kill('SIGTERM');
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      await Promise.race([new Promise((r) => child.once('spawn', r)), failed]);
      for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity }))
        yield line;
    } finally {
      signal.removeEventListener('abort', stop);
      if (child.exitCode === null) stop();
    }
  };
}
