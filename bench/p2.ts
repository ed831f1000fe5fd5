// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P2 (docs/adr/0005, Consequences): how long one `plan()` takes on a big fleet. Fleets of
 * 10 000 and 100 000 machines in one pool (clusters of 100 with 3 control-plane machines, three
 * zones), five policies (concurrency 10 %, a rate of a tenth of the fleet an hour, a nightly window that is open,
 * 5 canaries with a 10 m soak, one zone at a time) and one active rollout in mid-flight: canaries
 * done and soaked, a fifth of zone a upgraded, some machines in flight, the start history of the
 * last hour; the rollout is the first step of a two-step upgrade path. Times plan() — the
 * executor runs it every reconcile — as the median of several runs after a warm-up.
 */
import { plan } from '../src/core/rollout/index.ts';
import type {
  FleetSnapshot,
  Machine,
  MachineProgress,
  Policy,
  StartRecord,
} from '../src/core/rollout/index.ts';

const now = Date.parse('2026-11-24T02:30:00Z');
const minute = 60_000;
const zones = ['a', 'b', 'c'];

/** The five policies; the rate scales with the fleet (a tenth of it an hour). */
const policiesOf = (n: number): readonly Policy[] => [
  { kind: 'concurrency', limit: { percent: 10 } },
  { kind: 'rate', count: n / 10, periodMs: 60 * minute },
  { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: 240 * minute, timeZone: 'UTC' }] },
  { kind: 'canary', count: 5, soakMs: 10 * minute },
  { kind: 'zones', label: 'zone' },
];

function machines(n: number): Machine[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `m-${String(i).padStart(6, '0')}`,
    role: i % 100 < 3 ? 'control-plane' : 'worker',
    pool: 'fleet',
    cluster: `c-${Math.floor(i / 100)}`,
    labels: { zone: zones[i % zones.length] ?? 'a' },
    version: '1.0.0',
    digest: 'sha256:10',
    available: i % 997 !== 0,
  }));
}

/** A rollout in mid-flight: its canaries done, a fifth of zone a done, 20 in flight. */
function snapshotOf(n: number): FleetSnapshot {
  const fleet = machines(n);
  const rollout = {
    id: 'r-1.1.0',
    pool: 'fleet',
    target: { version: '1.1.0', digest: 'sha256:11' },
    state: 'Active' as const,
    createdAt: now - 180 * minute,
    // A step of a multi-hop path, as discovery makes them. plan() reads no `path`; what
    // a path costs it is the AheadOfTarget check, which every Pending machine here goes through.
    path: ['1.1.0', '1.2.0'],
  };
  const base: FleetSnapshot = {
    machines: fleet,
    pools: [{ name: 'fleet', policies: policiesOf(n) }],
    fleetPolicies: [],
    rollouts: [{ ...rollout, machines: {} }],
    starts: [],
  };
  // The canaries are whatever the planner puts first; ask it, then mark them done long ago.
  const canaries = plan(base, now).decisions.filter((d) => d.batch === 0);
  const progress: Record<string, MachineProgress> = {};
  const starts: StartRecord[] = [];
  const done = (id: string, at: number): void => {
    progress[id] = { phase: 'Succeeded', startedAt: at, finishedAt: at + 10 * minute };
  };
  for (const d of canaries) done(d.machine, now - 120 * minute);
  const zoneA = fleet.filter((m) => m.labels['zone'] === 'a' && m.role === 'worker');
  zoneA.slice(0, Math.floor(zoneA.length / 5)).forEach((m, i) => {
    const at = now - 90 * minute + (i % 60) * minute;
    done(m.id, at);
    if (at > now - 60 * minute)
      starts.push({ machine: m.id, pool: 'fleet', rollout: rollout.id, at });
  });
  for (const m of zoneA.slice(-20)) {
    progress[m.id] = { phase: 'InFlight', startedAt: now - 5 * minute };
    starts.push({ machine: m.id, pool: 'fleet', rollout: rollout.id, at: now - 5 * minute });
  }
  return { ...base, rollouts: [{ ...rollout, machines: progress }], starts };
}

interface Timing {
  readonly machines: number;
  readonly medianMs: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly runs: number;
  readonly started: number;
  readonly waiting: number;
}

function time(n: number, runs: number): Timing {
  const snapshot = snapshotOf(n);
  for (let i = 0; i < 3; i++) plan(snapshot, now); // warm-up: JIT, compiled crons, order caches
  const ms: number[] = [];
  let last = plan(snapshot, now);
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    last = plan(snapshot, now);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return {
    machines: n,
    medianMs: ms[Math.floor(ms.length / 2)] ?? NaN,
    minMs: ms[0] ?? NaN,
    maxMs: ms[ms.length - 1] ?? NaN,
    runs,
    started: last.decisions.filter((d) => d.action === 'start').length,
    waiting: last.decisions.filter((d) => d.action === 'wait').length,
  };
}

const f = (ms: number): string => ms.toFixed(1);

/** Run P2 and print its table and `BENCH P2 …` line. */
export function runP2(): Promise<void> {
  const results = [time(10_000, 25), time(100_000, 7)];
  const rows = [
    ['machines', 'runs', 'median ms', 'min ms', 'max ms', 'start', 'wait'],
    ...results.map((r) => [
      String(r.machines),
      String(r.runs),
      f(r.medianMs),
      f(r.minMs),
      f(r.maxMs),
      String(r.started),
      String(r.waiting),
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const lines = rows.map((r) => r.map((c, i) => c.padStart(widths[i] ?? 0)).join('  '));
  const [k10, k100] = results;
  process.stdout.write(`P2: plan() on one rollout, 5 policies\n${lines.join('\n')}\n`);
  process.stdout.write(
    `BENCH P2 plan_10k_ms=${f(k10?.medianMs ?? NaN)} plan_100k_ms=${f(k100?.medianMs ?? NaN)}\n`,
  );
  return Promise.resolve();
}
