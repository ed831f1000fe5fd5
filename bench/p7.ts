// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P7: a release pushed to the registry → the operator starting its first
 * machine, with the operator's default settings (`interval` and `discoverEvery` as
 * `protocol/operator-config.ts` defaults them, read from there, not copied). A lab fleet of 2
 * workers (`molt lab machine`, real agents over mTLS) in one pool following `beta`, no policies;
 * the operator in this process with the adapters `molt operator` ships: agent gateway, discovery
 * over the real docker-registry 2.8, state and leader election in a real etcd (one member).
 *
 * Per round: wait a random time in [0, discoverEvery) so pushes fall at every phase of the
 * operator's cycle, push release 1.<i>.0 to `beta`, note when the push completed; let the rollout
 * complete; then read from the store when discovery created the rollout (history
 * `rollout-created`), when the first start was recorded (the start record, written before the
 * agent is asked) and when an agent accepted it (history `machine-start`). The times come from the
 * operator's clock, which is this process's. Target: ≤ 5 s from push to the first start.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { official, startLabFleet, type WorkerFleet } from '../src/lab/fleet/fleet.ts';
import {
  operatorDefaults,
  startBenchOperator,
  type BenchOperator,
} from '../test/integration/operator/lab-operator.ts';
import { moltArgv } from '../src/testkit/molt-entry.ts';

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};
export const seconds = (ms: number): string => (ms / 1000).toFixed(2);

const rounds = 8;
const workers = 2;
const pool = 'workers';

interface Round {
  readonly version: string;
  readonly delayMs: number;
  /** push complete → rollout created (discovery). */
  readonly discoveredMs: number;
  /** push complete → first start record. */
  readonly startMs: number;
  /** push complete → first agent accepted the upgrade (history `machine-start`). */
  readonly acceptedMs: number;
  /** Discovery scans in the round, to show the scan period the loop actually gives. */
  readonly scanGapsMs: readonly number[];
}

async function round(
  fleet: WorkerFleet,
  op: BenchOperator,
  i: number,
  discoverEveryMs: number,
): Promise<Round> {
  const version = `1.${String(i)}.0`;
  const delayMs = Math.round(Math.random() * discoverEveryMs);
  await sleep(delayMs);
  await fleet.publish(version, { ...official, 'dev.molt.channels': 'beta' });
  const pushed = Date.now();
  const r = await op.completed(version, pool, 120_000);
  const stored = await op.store.read();
  const history = (await op.store.history()).filter((e) => e.rollout === r.id);
  const first = Math.min(...stored.starts.filter((s) => s.rollout === r.id).map((s) => s.at));
  const created = history.find((e) => e.kind === 'rollout-created')?.at ?? Number.NaN;
  const accepted = Math.min(...history.filter((e) => e.kind === 'machine-start').map((e) => e.at));
  const scans = op.scans.filter((t) => t >= pushed - 2 * discoverEveryMs && t <= first);
  return {
    version,
    delayMs,
    discoveredMs: created - pushed,
    startMs: first - pushed,
    acceptedMs: accepted - pushed,
    scanGapsMs: scans.slice(1).map((t, k) => t - (scans[k] ?? t)),
  };
}

/** Run P7 and print its table and `BENCH P7 …` line. */
export async function runP7(): Promise<void> {
  const defaults = operatorDefaults();
  const fleet = await startLabFleet({ molt: moltArgv, workers, controlPlane: false });
  try {
    const op = await startBenchOperator(fleet, [{ name: pool, channel: 'beta', policies: [] }]);
    const results: Round[] = [];
    try {
      for (let i = 1; i <= rounds; i++)
        results.push(await round(fleet, op, i, defaults.discoverEveryMs));
    } finally {
      await op.stop();
    }
    const starts = results.map((r) => r.startMs);
    const gaps = results.flatMap((r) => r.scanGapsMs);
    const cell = (x: number | string, w: number): string => String(x).padStart(w);
    const lines = [
      `P7: ${String(workers)} worker lab machines in one pool (channel beta, no policies), real etcd store, docker-registry 2.8; operator defaults: interval ${String(defaults.intervalMs)} ms, discoverEvery ${String(defaults.discoverEveryMs)} ms`,
      `each round: random wait in [0, discoverEvery), push 1.<i>.0 to beta, times from push complete (s); rollout completes before the next round`,
      '',
      `${'release'.padEnd(8)}${cell('wait', 7)}${cell('discovered', 12)}${cell('start recorded', 16)}${cell('agent accepted', 16)}`,
      ...results.map(
        (r) =>
          `${r.version.padEnd(8)}${cell(seconds(r.delayMs), 7)}${cell(seconds(r.discoveredMs), 12)}${cell(seconds(r.startMs), 16)}${cell(seconds(r.acceptedMs), 16)}`,
      ),
      `${'median'.padEnd(15)}${cell(seconds(median(results.map((r) => r.discoveredMs))), 12)}${cell(seconds(median(starts)), 16)}${cell(seconds(median(results.map((r) => r.acceptedMs))), 16)}`,
      `${'max'.padEnd(15)}${cell(seconds(Math.max(...results.map((r) => r.discoveredMs))), 12)}${cell(seconds(Math.max(...starts)), 16)}${cell(seconds(Math.max(...results.map((r) => r.acceptedMs))), 16)}`,
      '',
      `discovery scans observed ${gaps.length > 0 ? `${seconds(Math.min(...gaps))}–${seconds(Math.max(...gaps))} s apart (median ${seconds(median(gaps))} s)` : 'once per round'}; a push waits for the next scan, so the worst case is about one scan period plus one pass`,
      `push → first start recorded: median ${seconds(median(starts))} s, max ${seconds(Math.max(...starts))} s (target ≤ 5 s)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `BENCH P7 first_start_s=${seconds(median(starts))} max_s=${seconds(Math.max(...starts))} rounds=${String(rounds)}\n`,
    );
  } finally {
    await fleet.stop();
  }
}
