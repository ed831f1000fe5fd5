// SPDX-License-Identifier: Apache-2.0
// fast-check generators and an independent oracle for the rollout properties (no tests here).
import fc from 'fast-check';
import { Cron } from 'croner';
import { validatePolicies } from './validate.ts';
import type {
  FleetSnapshot,
  Machine,
  MachineProgress,
  Policy,
  Pool,
  Rollout,
  Window,
} from './types.ts';

export const T0 = Date.parse('2026-03-28T20:00:00.000Z'); // the night before the Berlin DST switch
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const POOLS = ['cp', 'a', 'b'] as const;
export const OLD = 'sha256:old';

/** `arb` about once in `n` draws, else null. */
const rarely = <T>(arb: fc.Arbitrary<T>, n: number): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: n - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

const windowArb: fc.Arbitrary<Window> = fc.record({
  cron: fc.constantFrom('0 * * * *', '*/15 * * * *', '0 2 * * *', '30 1 * * 1-5', '0 */4 * * *'),
  durationMs: fc.constantFrom(5 * MIN, 20 * MIN, HOUR, 3 * HOUR),
  timeZone: fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York'),
});

/** Exclusions are short: an exclusion that is always open only tests the search budget. */
const exclusionArb: fc.Arbitrary<Window> = fc.record({
  cron: fc.constantFrom('0 2 * * *', '30 1 * * 1-5', '0 */4 * * *', '45 * * * *'),
  durationMs: fc.constantFrom(5 * MIN, 20 * MIN, HOUR),
  timeZone: fc.constantFrom('UTC', 'Europe/Berlin'),
});

const policyArb: fc.Arbitrary<Policy> = fc.oneof(
  fc.record({
    kind: fc.constant('concurrency' as const),
    limit: fc.oneof(
      fc.record({ count: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ percent: fc.integer({ min: 5, max: 60 }) }),
    ),
  }),
  fc.record({
    kind: fc.constant('rate' as const),
    count: fc.integer({ min: 1, max: 3 }),
    periodMs: fc.constantFrom(10 * MIN, HOUR, 2 * HOUR),
  }),
  fc.record(
    {
      kind: fc.constant('window' as const),
      windows: fc.array(windowArb, { minLength: 1, maxLength: 2 }),
      exclusions: fc.array(exclusionArb, { maxLength: 1 }),
    },
    { requiredKeys: ['kind', 'windows'] },
  ),
  fc.record({
    kind: fc.constant('canary' as const),
    count: fc.integer({ min: 1, max: 2 }),
    soakMs: fc.constantFrom(0, 10 * MIN, HOUR),
  }),
  fc.record({ kind: fc.constant('batches' as const), soakMs: fc.constantFrom(0, 15 * MIN) }),
  fc.record({ kind: fc.constant('machine-soak' as const), soakMs: fc.constantFrom(5 * MIN, HOUR) }),
  fc.record({ kind: fc.constant('zones' as const), label: fc.constant('zone') }),
  fc.constant({ kind: 'control-plane-first' as const }),
  fc.record({
    kind: fc.constant('failure-budget' as const),
    maxFailed: fc.integer({ min: 1, max: 3 }),
  }),
);

/** At most one policy of each single kind, as validation demands. */
const policiesArb = (max: number): fc.Arbitrary<Policy[]> =>
  fc.array(policyArb, { maxLength: max }).map((ps) => {
    const multi = new Set(['concurrency', 'rate', 'window']);
    const seen = new Set<string>();
    return ps.filter((p) => {
      if (multi.has(p.kind)) return true;
      if (seen.has(p.kind)) return false;
      seen.add(p.kind);
      return true;
    });
  });

const machineArb = (i: number): fc.Arbitrary<Machine> =>
  fc
    .record({
      cp: fc.boolean(),
      pool: fc.constantFrom(...POOLS),
      cluster: fc.constantFrom(undefined, 'x', 'y'),
      zone: fc.constantFrom(undefined, 'z1', 'z2', 'z3'),
      down: fc.integer({ min: 0, max: 14 }),
      hold: rarely(fc.integer({ min: -2, max: 6 }), 8),
      pin: rarely(fc.constantFrom('1.0.0', '2.0.0'), 10),
      onTarget: fc.integer({ min: 0, max: 14 }),
      wariness: rarely(fc.double({ min: 0, max: 0.999, noNaN: true }), 3),
    })
    .map((r): Machine => {
      const pool = r.cp && r.pool !== 'b' ? 'cp' : r.pool;
      return {
        id: `m${String(i).padStart(2, '0')}`,
        role: r.cp && pool === 'cp' ? 'control-plane' : 'worker',
        pool,
        ...(r.cluster === undefined ? {} : { cluster: r.cluster }),
        labels: r.zone === undefined ? {} : { zone: r.zone },
        digest: r.onTarget === 0 ? 'sha256:t-a' : OLD,
        version: '1.0.0',
        available: r.down !== 0,
        ...(r.hold === null ? {} : { hold: { reason: 'test', until: T0 + r.hold * HOUR } }),
        ...(r.pin === null ? {} : { pin: { version: r.pin, reason: 'test' } }),
        ...(r.wariness === null ? {} : { wariness: r.wariness }),
      };
    });

export const machinesArb: fc.Arbitrary<Machine[]> = fc
  .integer({ min: 1, max: 60 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => machineArb(i))));

const progressArb: fc.Arbitrary<MachineProgress | undefined> = fc.oneof(
  { weight: 60, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constant({ phase: 'InFlight' as const, startedAt: T0 - 20 * MIN }) },
  {
    weight: 8,
    arbitrary: fc.integer({ min: 1, max: 180 }).map((m) => ({
      phase: 'Succeeded' as const,
      startedAt: T0 - (m + 5) * MIN,
      finishedAt: T0 - m * MIN,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      phase: 'Failed' as const,
      startedAt: T0 - 2 * HOUR,
      finishedAt: T0 - HOUR,
    }),
  },
);

const rolloutArb = (i: number, machines: readonly Machine[]): fc.Arbitrary<Rollout> =>
  fc
    .record({
      pool: fc.constantFrom(...POOLS),
      state: fc.constantFrom(
        'Active',
        'Active',
        'Active',
        'Active',
        'Active',
        'Paused',
        'AwaitingApproval',
        'Halted',
      ),
      age: fc.integer({ min: 0, max: 48 }),
      phased: rarely(
        fc.record({
          startFraction: fc.constantFrom(0, 0.1, 0.5),
          durationMs: fc.constantFrom(HOUR, 6 * HOUR),
        }),
        4,
      ),
      progress: fc.array(progressArb, { minLength: machines.length, maxLength: machines.length }),
    })
    .map(({ pool, state, age, phased, progress }): Rollout => {
      const entries = machines.flatMap((m, k) => {
        const p = progress[k];
        return m.pool === pool && p !== undefined ? [[m.id, p] as const] : [];
      });
      return {
        id: `r${i}`,
        pool,
        target: { version: '2.0.0', digest: `sha256:t-${i === 0 ? 'a' : String(i)}` },
        state,
        createdAt: T0 - age * HOUR,
        ...(phased === null ? {} : { phased }),
        machines: Object.fromEntries(entries),
      };
    });

/** Random fleets with valid policies, 1–3 rollouts and a start history. */
export const snapshotArb: fc.Arbitrary<FleetSnapshot> = machinesArb
  .chain((machines) =>
    fc.record({
      machines: fc.constant(machines),
      pools: fc.tuple(
        ...POOLS.map((name) => policiesArb(4).map((policies): Pool => ({ name, policies }))),
      ),
      fleetPolicies: policiesArb(2),
      rollouts: fc
        .integer({ min: 1, max: 3 })
        .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => rolloutArb(i, machines)))),
      starts: fc.array(
        fc.record({
          machine: fc.constantFrom(...machines.map((m) => m.id)),
          pool: fc.constantFrom(...POOLS),
          rollout: fc.constant('r-old'),
          at: fc.integer({ min: T0 - 3 * HOUR, max: T0 }),
        }),
        { maxLength: 6 },
      ),
      leases: rarely(fc.record({ x: fc.constantFrom(...machines.map((m) => m.id)) }), 5),
    }),
  )
  .map(({ leases, ...s }): FleetSnapshot => (leases === null ? s : { ...s, leases }))
  .filter((s) => {
    try {
      validatePolicies(s.pools, s.fleetPolicies, s.machines);
      return true;
    } catch {
      return false;
    }
  });

// ---- the oracle: the rules written out naively, independent of plan.ts ----

/** Open iff the latest fire ≤ t is less than `durationMs` ago (croner's previousRuns, not nextRun). */
const crons = new Map<string, Cron>();

export function oracleOpen(w: Window, t: number): boolean {
  const key = `${w.cron}|${w.timeZone ?? 'UTC'}`;
  let cron = crons.get(key);
  if (cron === undefined) {
    cron = new Cron(w.cron, { paused: true, timezone: w.timeZone ?? 'UTC' });
    crons.set(key, cron);
  }
  const prev = cron.previousRuns(1, new Date(t + 1))[0];
  return prev !== undefined && t - prev.getTime() < w.durationMs;
}

export function oracleAllowed(p: Extract<Policy, { kind: 'window' }>, t: number): boolean {
  return (
    p.windows.some((w) => oracleOpen(w, t)) && !(p.exclusions ?? []).some((w) => oracleOpen(w, t))
  );
}

export const policiesFor = (s: FleetSnapshot, pool: string): Policy[] =>
  s.pools.find((p) => p.name === pool)?.policies.slice() ?? [];

/** Pool policy wins over the fleet's for the per-rollout kinds. */
export function single<K extends Policy['kind']>(
  s: FleetSnapshot,
  pool: string,
  kind: K,
): Extract<Policy, { kind: K }> | undefined {
  const is = (p: Policy): p is Extract<Policy, { kind: K }> => p.kind === kind;
  return policiesFor(s, pool).find(is) ?? s.fleetPolicies.find(is);
}

export const clusterOf = (m: Machine): string => m.cluster ?? 'default';

/** Machines unavailable now: down, in flight in any rollout, or within their machine soak. */
export function unavailableIds(s: FleetSnapshot, now: number): Set<string> {
  const byId = new Map(s.machines.map((m) => [m.id, m]));
  const out = new Set(s.machines.filter((m) => !m.available).map((m) => m.id));
  for (const r of s.rollouts) {
    for (const [id, p] of Object.entries(r.machines)) {
      const m = byId.get(id);
      if (m === undefined) continue;
      const soak = single(s, m.pool, 'machine-soak')?.soakMs ?? 0;
      const soaking = p.phase === 'Succeeded' && (p.finishedAt ?? -Infinity) + soak > now;
      if (p.phase === 'InFlight' || soaking) out.add(id);
    }
  }
  return out;
}

export const limitFor = (limit: { count: number } | { percent: number }, size: number): number =>
  'count' in limit ? limit.count : Math.max(1, Math.ceil((limit.percent * size) / 100 - 1e-9));
