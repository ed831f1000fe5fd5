// SPDX-License-Identifier: Apache-2.0
// The invariants of ADR 0005 §2 as checks over (snapshot before, snapshot after the starts, plan,
// now), shared by the plan walk and the simulate replay (no tests here).
import assert from 'node:assert/strict';
import {
  clusterOf,
  limitFor,
  oracleAllowed,
  policiesFor,
  single,
  unavailableIds,
} from './arbitraries.test.ts';
import type {
  FleetSnapshot,
  Machine,
  MachineDecision,
  MachineProgress,
  Plan,
  Policy,
  Rollout,
} from './types.ts';

const FINISHED = new Set(['Succeeded', 'Failed', 'RolledBack']);
export const phaseIn = (r: Rollout, id: string): string => r.machines[id]?.phase ?? 'Pending';
const skipped = (m: Machine, r: Rollout): boolean =>
  (m.pin !== undefined && m.pin.version !== r.target.version) || m.digest === r.target.digest;

/** The snapshot with the plan's starts applied (InFlight, recorded in the history). */
export function applyStarts(s: FleetSnapshot, p: Plan, now: number): FleetSnapshot {
  const byId = new Map(s.machines.map((m) => [m.id, m]));
  const starts = p.decisions.filter((d) => d.action === 'start');
  const rollouts = s.rollouts.map((r) => {
    const mine = starts.filter((d) => d.rollout === r.id);
    if (mine.length === 0) return r;
    const machines: Record<string, MachineProgress> = { ...r.machines };
    for (const d of mine) machines[d.machine] = { phase: 'InFlight', startedAt: now };
    return { ...r, machines };
  });
  const records = starts.map((d) => ({
    machine: d.machine,
    pool: byId.get(d.machine)!.pool,
    rollout: d.rollout,
    at: now,
  }));
  return { ...s, rollouts, starts: [...s.starts, ...records] };
}

export type Check = (before: FleetSnapshot, after: FleetSnapshot, p: Plan, now: number) => void;

export const startsOf = (p: Plan): MachineDecision[] =>
  p.decisions.filter((d) => d.action === 'start');

export const eligibleStarts: Check = (before, _after, p, now) => {
  const byId = new Map(before.machines.map((m) => [m.id, m]));
  const down = unavailableIds(before, now);
  const seen = new Set<string>();
  for (const d of startsOf(p)) {
    const r = before.rollouts.find((x) => x.id === d.rollout)!;
    const m = byId.get(d.machine)!;
    assert.ok(!seen.has(m.id), `${m.id} started twice`);
    seen.add(m.id);
    assert.equal(r.state, 'Active', `start in a ${r.state} rollout`);
    const failedN = Object.values(r.machines).filter(
      (x) => x.phase === 'Failed' || x.phase === 'RolledBack',
    ).length;
    assert.ok(
      failedN < (single(before, r.pool, 'failure-budget')?.maxFailed ?? 1),
      'start after the budget is spent',
    );
    assert.equal(phaseIn(r, m.id), 'Pending');
    assert.ok(!skipped(m, r), `${m.id} pinned or on target`);
    assert.ok(!down.has(m.id), `${m.id} was unavailable`);
    assert.ok(m.hold === undefined || m.hold.until <= now, `${m.id} is held`);
  }
};

export const concurrencyLimits: Check = (before, after, p, now) => {
  const unavailable = unavailableIds(after, now);
  const byId = new Map(after.machines.map((m) => [m.id, m]));
  const startedPools = new Set(startsOf(p).map((d) => byId.get(d.machine)!.pool));
  const scopes: [Policy[], Machine[]][] = [...startedPools].map((pool) => [
    policiesFor(before, pool),
    after.machines.filter((m) => m.pool === pool),
  ]);
  if (startedPools.size > 0) scopes.push([before.fleetPolicies.slice(), after.machines.slice()]);
  for (const [policies, members] of scopes) {
    const count = members.filter((m) => unavailable.has(m.id)).length;
    for (const c of policies) {
      if (c.kind !== 'concurrency') continue;
      assert.ok(
        count <= limitFor(c.limit, members.length),
        `${count} unavailable over ${JSON.stringify(c.limit)}`,
      );
    }
  }
};

export const rateLimits: Check = (before, after, p, now) => {
  const byId = new Map(after.machines.map((m) => [m.id, m]));
  const pools = new Set(startsOf(p).map((d) => byId.get(d.machine)!.pool));
  const scopes: [Policy[], string | undefined][] = [...pools].map((pool) => [
    policiesFor(before, pool),
    pool,
  ]);
  if (pools.size > 0) scopes.push([before.fleetPolicies.slice(), undefined]);
  for (const [policies, pool] of scopes) {
    for (const r of policies) {
      if (r.kind !== 'rate') continue;
      const n = after.starts.filter(
        (x) => x.at > now - r.periodMs && x.at <= now && (pool === undefined || x.pool === pool),
      ).length;
      assert.ok(
        n <= r.count,
        `${n} starts in ${r.periodMs} ms over ${r.count} (${pool ?? 'fleet'})`,
      );
    }
  }
};

export const windowsOpen: Check = (before, _after, p, now) => {
  const byId = new Map(before.machines.map((m) => [m.id, m]));
  for (const pool of new Set(startsOf(p).map((d) => byId.get(d.machine)!.pool))) {
    for (const w of [...policiesFor(before, pool), ...before.fleetPolicies]) {
      if (w.kind === 'window')
        assert.ok(oracleAllowed(w, now), `start in ${pool} while a window is closed`);
    }
  }
};

export const controlPlane: Check = (before, after, p, now) => {
  const byId = new Map(after.machines.map((m) => [m.id, m]));
  const unavailable = unavailableIds(after, now);
  for (const d of startsOf(p)) {
    const m = byId.get(d.machine)!;
    const cluster = clusterOf(m);
    if (m.role === 'control-plane') {
      const down = after.machines.filter(
        (x) => x.role === 'control-plane' && clusterOf(x) === cluster && unavailable.has(x.id),
      );
      assert.deepEqual(
        down.map((x) => x.id),
        [m.id],
        `control plane of ${cluster}: ${down.length} unavailable`,
      );
      const lease = before.leases?.[cluster];
      assert.ok(lease === undefined || lease === m.id, 'started against the lease');
      continue;
    }
    if (single(before, m.pool, 'control-plane-first') === undefined) continue;
    for (const cp of unfinishedControlPlane(after, cluster))
      assert.fail(`worker ${m.id} before ${cp}`);
  }
};

/** Control-plane machines of `cluster` Pending (not skipped) or InFlight in Active/Paused rollouts. */
function unfinishedControlPlane(s: FleetSnapshot, cluster: string): string[] {
  return s.rollouts
    .filter((r) => r.state === 'Active' || r.state === 'Paused')
    .flatMap((r) =>
      s.machines
        .filter(
          (cp) => cp.role === 'control-plane' && cp.pool === r.pool && clusterOf(cp) === cluster,
        )
        .filter((cp) => {
          const ph = phaseIn(r, cp.id);
          return ph === 'InFlight' || (ph === 'Pending' && !skipped(cp, r));
        })
        .map((cp) => `${r.id}/${cp.id}`),
    );
}

export const rolloutShape: Check = (before, _after, p, now) => {
  for (const r of before.rollouts) {
    const mine = p.decisions.filter((d) => d.rollout === r.id);
    const starts = mine.filter((d) => d.action === 'start' && d.batch > 0);
    if (starts.length === 0) continue;
    const canary = single(before, r.pool, 'canary');
    for (const c of mine.filter((d) => d.batch === 0)) {
      const pr = r.machines[c.machine];
      assert.ok(
        pr !== undefined && FINISHED.has(pr.phase),
        `wave start while canary ${c.machine} is ${pr?.phase ?? 'Pending'}`,
      );
      assert.ok(
        (pr.finishedAt ?? -Infinity) + (canary?.soakMs ?? 0) <= now,
        'canary still soaking',
      );
    }
    if (single(before, r.pool, 'batches') !== undefined) {
      const wave = starts[0]!.batch;
      assert.ok(
        starts.every((d) => d.batch === wave),
        'two waves at once',
      );
      // Earlier waves are finished, or their machine cannot start on its own account.
      const own = new Set(['Held', 'MachineUnavailable', 'PhasedNotYet']);
      for (const e of mine.filter((d) => d.batch > 0 && d.batch < wave)) {
        assert.ok(
          ['done', 'failed', 'soaking', 'skipped'].includes(e.action) ||
            own.has(e.reason?.code ?? ''),
          `wave ${wave} before ${e.machine}`,
        );
      }
    }
    const zones = single(before, r.pool, 'zones');
    if (zones === undefined) continue;
    const byId = new Map(before.machines.map((m) => [m.id, m]));
    for (const role of ['control-plane', 'worker']) {
      const z = new Set(
        starts
          .map((d) => byId.get(d.machine)!)
          .filter((m) => m.role === role)
          .map((m) => m.labels[zones.label]),
      );
      assert.ok(z.size <= 1, `zones ${[...z].join(',')} at once`);
    }
  }
};

export const CHECKS: readonly Check[] = [
  eligibleStarts,
  concurrencyLimits,
  rateLimits,
  windowsOpen,
  controlPlane,
  rolloutShape,
];
