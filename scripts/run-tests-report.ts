// SPDX-License-Identifier: Apache-2.0
/** The totals, the ten slowest files and why each failed file failed: scripts/run-tests.ts's end. */

export interface Outcome {
  readonly file: string;
  readonly lane: string;
  readonly ms: number;
  /** CPU seconds of the file's processes that ended with it (and any other that ended meanwhile). */
  readonly cpu: number;
  readonly ok: boolean;
  readonly counts: Readonly<Record<string, number>>;
  /** Where a failed file's report first went wrong, repeated in the summary (logs keep their tail). */
  readonly failure?: string;
}

/** Print the run's totals; true when every file passed. */
export function report(outcomes: Outcome[], wallMs: number): boolean {
  const sum = (k: string): number => outcomes.reduce((n, o) => n + (o.counts[k] ?? 0), 0);
  const lines = [
    '',
    `ℹ files ${String(outcomes.length)}`,
    ...['tests', 'passed', 'failed', 'cancelled', 'skipped', 'todo'].map(
      (k) => `ℹ ${k} ${String(sum(k))}`,
    ),
    `ℹ wall ${(wallMs / 1000).toFixed(0)} s; the files' own times add up to ${(outcomes.reduce((n, o) => n + o.ms, 0) / 1000).toFixed(0)} s, their CPU to ${outcomes.reduce((n, o) => n + o.cpu, 0).toFixed(0)} s`,
    '',
    'the ten slowest files:',
    ...[...outcomes]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10)
      .map(
        (o) =>
          `  ${(o.ms / 1000).toFixed(1).padStart(6)} s  ${o.file} (${o.lane}, cpu ${o.cpu.toFixed(0)} s)`,
      ),
  ];
  const failed = outcomes.filter((o) => !o.ok);
  if (failed.length > 0)
    lines.push(
      '',
      'failed files (their whole reports above):',
      ...failed.flatMap((o) => [
        `  ✖ ${o.file}`,
        ...(o.failure ?? 'no report').split('\n').map((l) => `    ${l}`),
      ]),
    );
  process.stdout.write(`${lines.join('\n')}\n`);
  return failed.length === 0;
}
