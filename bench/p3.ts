// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P3 (docs/adr/0005 "Alternatives"): lab rollout efficiency, makespan ÷ ideal
 * for N = 12 machines at concurrency k = 3, where ideal = ceil(N / k) × the per-machine upgrade
 * time. Target: ≤ 1.10.
 *
 * The fleet: 12 worker lab machines (`molt lab machine`, real agents over mTLS, grub and
 * systemd-boot alternating), no control plane; the operator in this process with the adapters
 * `molt operator` ships (agent gateway, discovery over the real docker-registry 2.8, state and
 * leader election in a real single-member etcd). "Default settings": one pool `workers` following
 * `beta` whose only policy is `concurrency: 3` — no canary, no soaks, no batches or zones, the
 * default failure budget — and the operator's defaults (`interval`, `discoverEvery`, … as
 * `protocol/operator-config.ts` defaults them). Release 1.1.0 is pushed and rolled out once.
 *
 * Per-machine upgrade time: the median of the machines' own upgrades as the operator recorded them
 * (its `startedAt` → `finishedAt`), in this same run. They ran under the same load as the rollout
 * (three upgrades at a time on this host), so the ratio measures the scheduling — slots left
 * idle, hand-over delays, uneven waves — and not how much slower a machine upgrades when two others
 * upgrade beside it, which a lone upgrade measured beforehand would charge to the operator. The
 * operator's times include its observation lag (a finish is seen at the next pass, on average
 * about half an interval late); the table also shows the agents' own journal times (first event →
 * result) and the ratio against those, which charges that lag to the operator too.
 * Makespan: the first start → the last finish, as the operator recorded them.
 */
import { availableParallelism } from 'node:os';
import { readFile } from 'node:fs/promises';
import type { Rollout } from '../src/core/rollout/types.ts';
import type { OperationSummaryView } from '../src/protocol/agent.ts';
import { official, startLabFleet, type Worker } from '../src/lab/fleet/fleet.ts';
import { operatorDefaults, startBenchOperator } from '../test/integration/operator/lab-operator.ts';
import { median, seconds } from './p7.ts';
import { maxOverlap } from '../src/testkit/rollout-timing.ts';
import { moltArgv } from '../src/testkit/molt-entry.ts';

const machines = 12;
const concurrency = 3;
const pool = 'workers';

interface Run {
  readonly id: string;
  readonly phase: string;
  readonly start: number;
  readonly finish: number;
  /** The agent's journal: first event → result event of the operation (epoch ms). */
  readonly agentStart: number;
  readonly agentFinish: number;
}

async function agentTimes(w: Worker, operationId: string | undefined): Promise<[number, number]> {
  const r = await w.molt(['node', 'operations', '-o', 'json']);
  if (r.code !== 0) throw new Error(`${w.id}: molt node operations failed: ${r.stderr}`);
  const ops = JSON.parse(r.stdout) as OperationSummaryView[];
  const op = ops.find((o) => o.operationId === operationId);
  if (op === undefined) throw new Error(`${w.id}: operation ${String(operationId)} not journalled`);
  return [Date.parse(op.firstTime), Date.parse(op.lastTime)];
}

async function runsOf(rollout: Rollout, workers: readonly Worker[]): Promise<Run[]> {
  const runs: Run[] = [];
  for (const w of workers) {
    const p = rollout.machines[w.id];
    if (p?.startedAt === undefined || p.finishedAt === undefined)
      throw new Error(`${w.id} did not run to an end: ${JSON.stringify(p)}`);
    const [agentStart, agentFinish] = await agentTimes(w, p.operationId);
    runs.push({
      id: w.id,
      phase: p.phase,
      start: p.startedAt,
      finish: p.finishedAt,
      agentStart,
      agentFinish,
    });
  }
  return runs.sort((a, b) => a.start - b.start);
}

/**
 * How long each freed slot stayed empty while machines were waiting: the (k + i)-th start could
 * have happened at the i-th finish.
 */
function handOvers(runs: readonly Run[]): number[] {
  const starts = runs.map((r) => r.start).sort((a, b) => a - b);
  const finishes = runs.map((r) => r.finish).sort((a, b) => a - b);
  return starts.slice(concurrency).map((s, i) => s - (finishes[i] ?? s));
}

/** Run P3 and print its table and `BENCH P3 …` line. */
export async function runP3(): Promise<void> {
  const defaults = operatorDefaults();
  const booting = performance.now();
  const fleet = await startLabFleet({ molt: moltArgv, workers: machines, controlPlane: false });
  const bootMs = performance.now() - booting;
  try {
    const op = await startBenchOperator(fleet, [
      { name: pool, channel: 'beta', policies: [{ kind: 'concurrency', limit: { count: 3 } }] },
    ]);
    let rollout: Rollout;
    let pushed: number;
    try {
      await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'beta' });
      pushed = Date.now();
      rollout = await op.completed('1.1.0', pool, 300_000);
    } finally {
      await op.stop();
    }
    const runs = await runsOf(rollout, fleet.workers);
    const first = Math.min(...runs.map((r) => r.start));
    const last = Math.max(...runs.map((r) => r.finish));
    const makespan = last - first;
    const durations = runs.map((r) => r.finish - r.start);
    const agentDurations = runs.map((r) => r.agentFinish - r.agentStart);
    const waves = Math.ceil(machines / concurrency);
    const perMachine = median(durations);
    const ideal = waves * perMachine;
    const ratio = makespan / ideal;
    const agentIdeal = waves * median(agentDurations);
    const gaps = handOvers(runs);
    const overlap = maxOverlap(runs.map((r) => [r.start, r.finish] as const));
    const failed = runs.filter((r) => r.phase !== 'Succeeded');
    const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
    const cell = (x: string, w: number): string => x.padStart(w);
    const at = (t: number): string => seconds(t - first);
    const lines = [
      `P3: ${String(machines)} worker lab machines, one pool (channel beta, concurrency ${String(concurrency)}, no canary/soak/batches/zones), real etcd store, docker-registry 2.8`,
      `operator defaults: interval ${String(defaults.intervalMs)} ms, discoverEvery ${String(defaults.discoverEveryMs)} ms; cores: ${String(availableParallelism())}; fleet booted in ${seconds(bootMs)} s; load average at the end: ${load}`,
      `times in s from the first start; "operator" = startedAt → finishedAt as the operator recorded them, "agent" = the agent's journal (first event → result)`,
      '',
      `${'machine'.padEnd(9)}${cell('start', 7)}${cell('finish', 8)}${cell('operator', 10)}${cell('agent', 8)}${cell('seen after', 12)}  result`,
      ...runs.map(
        (r) =>
          `${r.id.padEnd(9)}${cell(at(r.start), 7)}${cell(at(r.finish), 8)}${cell(seconds(r.finish - r.start), 10)}${cell(seconds(r.agentFinish - r.agentStart), 8)}${cell(seconds(r.finish - r.agentFinish), 12)}  ${r.phase}`,
      ),
      '',
      `push → first start ${seconds(first - pushed)} s; most machines in flight at once: ${String(overlap)} (limit ${String(concurrency)})${failed.length > 0 ? `; NOT succeeded: ${failed.map((r) => r.id).join(', ')}` : ''}`,
      `per-machine upgrade (operator-recorded): median ${seconds(perMachine)} s, min ${seconds(Math.min(...durations))} s, max ${seconds(Math.max(...durations))} s; agent journal median ${seconds(median(agentDurations))} s`,
      `freed slot → next start (${String(gaps.length)} hand-overs): median ${seconds(median(gaps))} s, max ${seconds(Math.max(...gaps))} s`,
      `makespan ${seconds(makespan)} s; ideal ${String(waves)} × ${seconds(perMachine)} = ${seconds(ideal)} s; ratio ${ratio.toFixed(3)} (target ≤ 1.10)`,
      `against the agents' own times (observation lag charged to the operator): ideal ${seconds(agentIdeal)} s, ratio ${(makespan / agentIdeal).toFixed(3)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `BENCH P3 ratio=${ratio.toFixed(3)} agent_ratio=${(makespan / agentIdeal).toFixed(3)} makespan_s=${seconds(makespan)} ideal_s=${seconds(ideal)}\n`,
    );
  } finally {
    await fleet.stop();
  }
}
