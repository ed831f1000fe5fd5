// SPDX-License-Identifier: Apache-2.0
/**
 * Waiting for started processes to become ready by their progress, not by a fixed deadline. On a
 * busy machine (load 15 on 2 cores) a lab machine can take minutes to write its `run/agent.json`
 * while it keeps working; a fixed deadline failed such starts with a bare ENOENT. And a process
 * that died at once must be reported at once, with what it printed, not after the deadline.
 */
import { ErrorCode, errorMessage, MoltError } from '../../core/errors.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ManagedProcess } from './managed-process.ts';
import { treeCpuMs } from './cpu-time.ts';

export interface ReadinessOptions<T> {
  /** What is awaited, as the error names it: `w-1`, `the control-plane cluster`. */
  readonly what: string;
  /** The processes whose progress extends the wait; the first to exit ends it. */
  readonly processes: readonly ManagedProcess[];
  /** Resolves once ready; throws while not (its last error is in the message). */
  readonly probe: () => Promise<T>;
  /**
   * How long the processes may make no progress (no output, under `cpuMs` of CPU between them)
   * before the wait gives up. @default 60_000
   */
  readonly quietMs?: number;
  /** The longest wait, however much progress (a process that keeps crash-looping). @default 600_000 */
  readonly limitMs?: number;
  /** CPU time the process trees must use to count as progress. @default 500 */
  readonly cpuMs?: number;
  /** @default 200 */
  readonly intervalMs?: number;
  /** A probe that has not settled after this long counts as failed (a hung connection). @default 30_000 */
  readonly probeTimeoutMs?: number;
  /** The error code of a failed wait. @default MOLT_LAB_FAILED */
  readonly code?: ErrorCode;
}

/** The last `lines` lines of `p`'s output, indented, for an error message. */
function outputTail(p: ManagedProcess, lines = 20): string {
  const text = p.output().trimEnd();
  if (text === '') return '    (no output)';
  return text
    .split('\n')
    .slice(-lines)
    .map((l) => `    ${l.slice(0, 400)}`)
    .join('\n');
}

interface Mark {
  readonly outputs: readonly string[];
  readonly cpu: number;
}

async function mark(processes: readonly ManagedProcess[]): Promise<Mark> {
  let cpu = 0;
  for (const p of processes) if (p.pid > 0) cpu += await treeCpuMs(p.pid);
  // The length and the last characters: output() is trimmed once it grows large.
  return {
    outputs: processes.map((p) => `${String(p.output().length)}:${p.output().slice(-64)}`),
    cpu,
  };
}

function progressed(before: Mark, now: Mark, cpuMs: number): boolean {
  if (now.outputs.some((o, i) => o !== before.outputs[i])) return true;
  return now.cpu - before.cpu >= cpuMs;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown } | undefined;

/** One probe: its value or error, a timeout error, or undefined when a process exited first. */
function probeOnce<T>(
  probe: () => Promise<T>,
  exited: Promise<unknown>,
  timeoutMs: number,
): Promise<Outcome<T>> {
  const timer = new AbortController();
  return Promise.race([
    probe().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
    exited.then(() => undefined),
    sleep(timeoutMs, undefined, { signal: timer.signal }).then(
      () => ({
        ok: false as const,
        error: new Error(`the check did not answer in ${String(timeoutMs / 1000)} s`),
      }),
      () => undefined,
    ),
  ]).finally(() => {
    timer.abort();
  });
}

/** Milliseconds since `processes` last made progress, asked once per poll. */
async function progressClock(
  processes: readonly ManagedProcess[],
  cpuMs: number,
): Promise<() => Promise<number>> {
  let last = await mark(processes);
  let at = performance.now();
  return async () => {
    const next = await mark(processes);
    // Less CPU than before: a process of the tree ended unwaited; count from here.
    if (next.cpu < last.cpu) last = { ...last, cpu: next.cpu };
    if (progressed(last, next, cpuMs)) {
      last = next;
      at = performance.now();
    }
    return performance.now() - at;
  };
}

/**
 * Poll `probe` until it resolves. Gives up at once when one of `processes` exits, when they made no
 * progress for `quietMs`, or after `limitMs`; the error ({@link MoltError}, `code`) names `what`,
 * why, the probe's last error and each process's last lines.
 */
export async function waitReady<T>(o: ReadinessOptions<T>): Promise<T> {
  const quietMs = o.quietMs ?? 60_000;
  const limitMs = o.limitMs ?? 600_000;
  const started = performance.now();
  let gone: { p: ManagedProcess; code: number | null } | undefined;
  const exited = Promise.race(o.processes.map((p) => p.exited.then((code) => ({ p, code }))));
  void exited.then((e) => (gone = e));
  // The clock starts at the first failed check: a ready process is answered without a /proc walk.
  let quietFor: (() => Promise<number>) | undefined;
  let lastError: unknown = new Error('not checked yet');
  const seconds = (ms: number): string => `${String(Math.round(ms / 1000))} s`;
  const why = async (): Promise<string | undefined> => {
    if (gone !== undefined)
      return `${gone.p.name} exited (code ${String(gone.code)}) before it was ready`;
    quietFor ??= await progressClock(o.processes, o.cpuMs ?? 500);
    if ((await quietFor()) > quietMs)
      return `no progress for ${seconds(quietMs)} (no output, no CPU)`;
    if (performance.now() - started > limitMs) return `not ready after ${seconds(limitMs)}`;
    return undefined;
  };
  for (;;) {
    const outcome = await probeOnce(o.probe, exited, o.probeTimeoutMs ?? 30_000);
    if (outcome?.ok === true) return outcome.value;
    if (outcome !== undefined) lastError = outcome.error;
    const reason = await why();
    if (reason !== undefined)
      throw new MoltError(
        o.code ?? ErrorCode.LabFailed,
        `${o.what} did not come up: ${reason}; last check: ${errorMessage(lastError)}\n` +
          o.processes.map((p) => `  ${p.name}, its last lines:\n${outputTail(p)}`).join('\n'),
        { cause: lastError },
      );
    await Promise.race([sleep(o.intervalMs ?? 200), exited]);
  }
}
