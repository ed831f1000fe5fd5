// SPDX-License-Identifier: Apache-2.0
/**
 * The runner of `npm test`'s test files: each file in the lane test/lanes.ts gives it, lanes side by
 * side under their own limits, a file's report printed whole when it ends (never interleaved with
 * another's), then the totals and the ten slowest files.
 *
 * Why not `node --test` alone: its one `--test-concurrency` applies to every file, and a QEMU boot or
 * two Kubernetes control planes starting at once on two cores is what made concurrent runs flaky.
 * Each file still runs in its own process through node:test's own `run()` and spec reporter.
 *
 * Usage: node scripts/run-tests.ts [--check] [--landing] [--kubernetes-building] [--lane NAME[,NAME…]]
 * [FILE…]. `--check` only checks that every file has a lane; `--landing` adds the lanes' landing
 * files (`.ci/run`); `--kubernetes-building` (scripts/test.sh, which builds the Kubernetes binaries
 * in the background) starts only the lanes marked `beforeKubernetes` until the build is done;
 * `--lane` runs only those lanes; FILEs run only those files (each in its lane). Files start in the order test/lanes.ts lists lanes and files, as the lanes and
 * the budget allow.
 */
import { readFileSync } from 'node:fs';
import { glob } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { run } from 'node:test';
import { parseArgs } from 'node:util';
import { spec } from 'node:test/reporters';
import { BUDGET, lanes, type Lane } from '../test/lanes.ts';
import { kubernetesBuilt, open, type Gate } from './run-tests-gate.ts';
import { report, type Outcome } from './run-tests-report.ts';

const root = join(import.meta.dirname, '..');
const runStarted = performance.now();
/** Seconds since the run started, as each line's prefix: where the time went, at a glance. */
const at = (): string => `[${((performance.now() - runStarted) / 1000).toFixed(0).padStart(4)} s]`;

interface Job {
  readonly file: string;
  readonly lane: Lane;
  readonly landing: boolean;
}

const isPattern = (f: string): boolean => f.includes('*');

async function expand(pattern: string): Promise<string[]> {
  const out: string[] = [];
  for await (const f of glob(pattern, { cwd: root })) out.push(f);
  return out.sort();
}

/** Every file each lane names, in order: its patterns expanded, its landing files marked. */
async function laneJobs(): Promise<{ jobs: Job[]; problems: string[] }> {
  const jobs: Job[] = [];
  const problems: string[] = [];
  for (const lane of lanes) {
    if (!(lane.weight > 0 && lane.weight <= BUDGET && lane.concurrency >= 1))
      problems.push(
        `lane ${lane.name}: its weight must be 1 to ${String(BUDGET)}, its concurrency at least 1`,
      );
    const tail = lane.tailConcurrency ?? lane.concurrency;
    if (tail < lane.concurrency || tail * lane.weight > BUDGET)
      problems.push(
        `lane ${lane.name}: its tail concurrency must be at least its concurrency and fit the budget (${String(tail)} × ${String(lane.weight)} > ${String(BUDGET)})`,
      );
    const entries = [
      ...lane.files.map((f) => [f, false] as const),
      ...(lane.landing ?? []).map((f) => [f, true] as const),
    ];
    for (const [entry, landing] of entries) {
      const files = isPattern(entry) ? await expand(entry) : [entry];
      if (files.length === 0) problems.push(`lane ${lane.name}: '${entry}' matches no file`);
      jobs.push(...files.map((file) => ({ file, lane, landing })));
    }
  }
  return { jobs, problems };
}

/** Every lane's files, checked: each integration file in exactly one lane, every name a file. */
async function placedFiles(): Promise<{ jobs: Job[]; problems: string[] }> {
  const { jobs, problems } = await laneJobs();
  const placed = new Map<string, string>();
  for (const { file, lane } of jobs) {
    const other = placed.get(file);
    if (other !== undefined) problems.push(`${file} is in two lanes: ${other} and ${lane.name}`);
    placed.set(file, lane.name);
  }
  const existing = new Set([
    ...(await expand('test/integration/**/*.test.ts')),
    ...(await expand('test/landing/**/*.test.ts')),
  ]);
  for (const file of existing)
    if (!placed.has(file)) problems.push(`${file} is in no lane: place it in test/lanes.ts`);
  for (const [file, lane] of placed)
    if (!file.startsWith('src/') && !existing.has(file))
      problems.push(`lane ${lane}: ${file} does not exist`);
  return { jobs, problems };
}

/**
 * CPU seconds of this runner's children that have ended (cutime + cstime of /proc/self/stat): each
 * file's process, with whatever it started and waited for, adds its time when it ends.
 */
function childrenCpu(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/**
 * The lines of a failed file's report from its first failure on, at most `max`: a long run's log is
 * often read from its end, so the summary repeats why each file failed instead of pointing above.
 */
function failureExcerpt(report: string, max = 40): string {
  const lines = report.split('\n');
  // The spec reporter ends with its own list of what failed and why; without one, the first ✖.
  const listed = lines.findIndex((l) => /^✖ failing tests:/.test(l));
  const first = listed !== -1 ? listed + 1 : lines.findIndex((l) => /^\s*✖ /.test(l));
  const from = first === -1 ? Math.max(0, lines.length - max) : first;
  const excerpt = lines.slice(from, from + max);
  if (from + max < lines.length)
    excerpt.push(`… ${String(lines.length - from - max)} more lines above`);
  return excerpt.join('\n').trimEnd();
}

/** The spec report without its per-file totals (the runner prints one set for the whole run). */
function trimmed(report: string): string {
  return report
    .split('\n')
    .filter((l) => !/^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /.test(l))
    .join('\n')
    .trimEnd();
}

let cpuSeen = childrenCpu();

async function runFile(job: Job): Promise<Outcome> {
  const started = performance.now();
  process.stdout.write(`${at()} ▷ ${job.file} (${job.lane.name})\n`);
  const stream = run({
    files: [join(root, job.file)],
    cwd: root,
    env: process.env,
    // A test past the lane's time is cancelled inside its file, so the file's after() hooks stop
    // what it started; the signal, a minute later, ends a file that does not stop even so.
    timeout: job.lane.timeoutMinutes * 60_000,
    signal: AbortSignal.timeout((job.lane.timeoutMinutes + 1) * 60_000),
  });
  let counts: Record<string, number> = {};
  // Failed until the run's own summary says otherwise: a stream that ends without one failed.
  let ok = false;
  // The run's own summary (no `file`): a file that fails to load has no summary of its own.
  stream.on('test:summary', (s: { file?: string; success: boolean; counts: object }) => {
    if (s.file !== undefined) return;
    counts = s.counts as Record<string, number>;
    ok = s.success;
  });
  let report = '';
  for await (const chunk of stream.compose(spec)) report += String(chunk);
  const ms = performance.now() - started;
  const cpu = childrenCpu() - cpuSeen;
  cpuSeen += cpu;
  const failed = (counts['failed'] ?? 0) + (counts['cancelled'] ?? 0);
  ok &&= failed === 0 && report.length > 0;
  const head = `${at()} ${ok ? '■' : '✖'} ${job.file} · ${job.lane.name} · ${(ms / 1000).toFixed(1)} s · cpu ${cpu.toFixed(1)} s`;
  process.stdout.write(`${head}\n${trimmed(report)}\n`);
  const outcome = { file: job.file, lane: job.lane.name, ms, cpu, ok, counts };
  return ok ? outcome : { ...outcome, failure: failureExcerpt(trimmed(report)) };
}

/** A file that never ran: the runner's own failure (a broken stream, a failed build) fails it. */
function notRun(job: Job, why: string): Outcome {
  process.stdout.write(`${at()} ✖ ${job.file} · ${job.lane.name}: ${why}\n`);
  return {
    file: job.file,
    lane: job.lane.name,
    ms: 0,
    cpu: 0,
    ok: false,
    counts: {},
    failure: why,
  };
}

/** Start jobs in order as `gate`, their lanes' limits and the budget allow. */
async function schedule(jobs: Job[], gate: Gate): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const running = new Map<Job, Promise<void>>();
  const inLane = (lane: Lane): number => [...running.keys()].filter((j) => j.lane === lane).length;
  const used = (): number => [...running.keys()].reduce((n, j) => n + j.lane.weight, 0);
  let pending = [...jobs];
  // The tail: nothing of another lane is waiting or running, so a lane may use its tail limit.
  const alone = (lane: Lane): boolean =>
    [...pending, ...running.keys()].every((j) => j.lane === lane);
  const limit = (lane: Lane): number =>
    alone(lane) ? (lane.tailConcurrency ?? lane.concurrency) : lane.concurrency;
  const fits = (job: Job): boolean =>
    gate.mayStart(job.lane) &&
    inLane(job.lane) < limit(job.lane) &&
    used() + job.lane.weight <= BUDGET;
  const start = (job: Job): void => {
    running.set(
      job,
      runFile(job)
        .catch((e: unknown): Outcome => notRun(job, String(e)))
        .then((o) => {
          outcomes.push(o);
          running.delete(job);
        }),
    );
  };
  while (pending.length > 0 || running.size > 0) {
    const never = gate.failed();
    if (never !== undefined) {
      outcomes.push(...pending.filter((j) => !gate.mayStart(j.lane)).map((j) => notRun(j, never)));
      pending = pending.filter((j) => gate.mayStart(j.lane));
    }
    for (const job of pending.filter(fits)) {
      if (!fits(job)) continue; // an earlier start this round took its place
      pending = pending.filter((j) => j !== job);
      start(job);
    }
    const held = pending.some((j) => !gate.mayStart(j.lane)) && never === undefined;
    if (running.size === 0 && !held) break;
    await Promise.race([...running.values(), ...(held ? [gate.over] : [])]);
  }
  return outcomes;
}

/** What the command line asks for, or a usage error. */
function parse(argv: string[]): {
  values: { check?: boolean; landing?: boolean; 'kubernetes-building'?: boolean; lane?: string[] };
  files: string[];
} {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      check: { type: 'boolean' },
      landing: { type: 'boolean' },
      'kubernetes-building': { type: 'boolean' },
      lane: { type: 'string', multiple: true },
    },
  });
  return { values, files: positionals.map((f) => relative(root, resolve(process.cwd(), f))) };
}

/** The jobs asked for, or what was asked that is not there. */
function choose(jobs: Job[], argv: string[]): { chosen: Job[]; unknown: string[] } {
  const { values, files } = parse(argv);
  const laneNames = new Set(values.lane?.flatMap((l) => l.split(',')));
  const unknown = [
    ...files.filter((f) => !jobs.some((j) => j.file === f)),
    ...[...laneNames].filter((l) => !lanes.some((lane) => lane.name === l)).map((l) => `lane ${l}`),
  ];
  const chosen = jobs.filter((j) =>
    files.length > 0
      ? files.includes(j.file)
      : (laneNames.size === 0 || laneNames.has(j.lane.name)) &&
        (values.landing === true || !j.landing),
  );
  return { chosen, unknown };
}

async function main(argv: string[]): Promise<number> {
  const { jobs, problems } = await placedFiles();
  if (problems.length > 0) {
    process.stderr.write(`molt: MOLT_TEST_LANES: test/lanes.ts:\n  ${problems.join('\n  ')}\n`);
    return 2;
  }
  const { chosen, unknown } = choose(jobs, argv);
  if (unknown.length > 0) {
    process.stderr.write(
      `molt: MOLT_TEST_LANES: no such test file or lane: ${unknown.join(', ')}\n`,
    );
    return 2;
  }
  const { values } = parse(argv);
  if (values.check === true) return 0;
  const outcomes = await schedule(
    chosen,
    values['kubernetes-building'] === true
      ? kubernetesBuilt((line) => process.stdout.write(`${at()} ${line}\n`))
      : open,
  );
  return report(outcomes, performance.now() - runStarted) ? 0 : 1;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  // parseArgs' refusals (an unknown option, a missing value) are usage errors, not crashes.
  if (!(e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')))
    throw e;
  process.stderr.write(`molt: MOLT_TEST_USAGE: ${e.message}\n`);
  process.exitCode = 2;
}
