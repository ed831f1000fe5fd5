// SPDX-License-Identifier: Apache-2.0
/**
 * `systemctl` as a child process: argument arrays (unit names never pass through a shell), a
 * timeout on every call, and the exit status as a value, because systemctl answers questions
 * (`is-active`, `is-system-running`) with non-zero exits that are not failures.
 */
import { execFile } from 'node:child_process';

/** What one systemctl call printed and how it ended. */
export interface SystemctlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Killed by its timeout (or the caller's signal) before it finished. */
  readonly timedOut: boolean;
}

export interface Systemctl {
  run(
    args: readonly string[],
    o?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<SystemctlResult>;
}

/** @param binary the systemctl to run; tests pass a stand-in (no machine here runs systemd). */
export function createSystemctl(binary = 'systemctl', defaultTimeoutMs = 30_000): Systemctl {
  return {
    run(args, o = {}) {
      return new Promise((resolve) => {
        execFile(
          binary,
          [...args],
          {
            timeout: o.timeoutMs ?? defaultTimeoutMs,
            killSignal: 'SIGKILL',
            ...(o.signal === undefined ? {} : { signal: o.signal }),
            env: { ...process.env, SYSTEMD_PAGER: '', SYSTEMD_COLORS: '0', LC_ALL: 'C' },
          },
          (error, stdout, stderr) => {
            const e = error as (NodeJS.ErrnoException & { killed?: boolean }) | null;
            const code = e === null ? 0 : typeof e.code === 'number' ? e.code : -1;
            resolve({
              code,
              stdout,
              stderr: e !== null && typeof e.code === 'string' ? `${stderr}${e.message}` : stderr,
              timedOut: e?.killed === true || e?.name === 'AbortError',
            });
          },
        );
      });
    },
  };
}

/** First non-empty line of what systemctl printed, for messages. */
export function firstLine(r: SystemctlResult): string {
  return (
    `${r.stderr}\n${r.stdout}`
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? `exit ${String(r.code)}`
  );
}
