// SPDX-License-Identifier: Apache-2.0
// simulate(): examples of the predicted schedule, and a property replaying random schedules
// through the same invariant checks as the plan walk.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { snapshotArb, T0 as T_PROP } from './arbitraries.test.ts';
import { HOUR, machine, MIN, rollout, snapshot, T0, workers } from './fixtures.test.ts';
import {
  concurrencyLimits,
  controlPlane,
  eligibleStarts,
  rateLimits,
  windowsOpen,
} from './invariants.test.ts';
import { simulate, type Schedule } from './simulate.ts';
import type { FleetSnapshot, MachineDecision, MachineProgress, Plan } from './types.ts';

const startTimes = (s: Schedule): number[] => s.starts.map((x) => x.startAt - T0);

describe('simulate', () => {
  it('runs waves of the concurrency limit back to back', () => {
    const s = snapshot({ policies: [{ kind: 'concurrency', limit: { count: 2 } }] });
    const sched = simulate(s, T0, { upgradeMs: 10 * MIN });
    assert.deepEqual(startTimes(sched), [0, 0, 10 * MIN, 10 * MIN]);
    assert.equal(sched.end, T0 + 20 * MIN);
    assert.deepEqual(sched.unscheduled, []);
    assert.equal(sched.verdicts[0]?.verdict, 'complete');
  });

  it('starts at the window opening and spaces starts by the rate limit', () => {
    const s = snapshot({
      machines: workers(3),
      policies: [
        { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: 6 * HOUR }] },
        { kind: 'rate', count: 1, periodMs: HOUR },
      ],
    });
    const sched = simulate(s, T0, { upgradeMs: 10 * MIN });
    const open = Date.parse('2026-11-24T02:00:00.000Z');
    assert.deepEqual(
      sched.starts.map((x) => x.startAt),
      [open, open + HOUR, open + 2 * HOUR],
    );
  });

  it('runs the canary, waits out its soak, then the rest', () => {
    const s = snapshot({ policies: [{ kind: 'canary', count: 1, soakMs: HOUR }] });
    const sched = simulate(s, T0, { upgradeMs: 10 * MIN });
    assert.deepEqual(startTimes(sched), [0, 70 * MIN, 70 * MIN, 70 * MIN]);
    assert.deepEqual(
      sched.starts.map((x) => x.batch),
      [0, 1, 1, 1],
    );
  });

  it('lists machines that never start within the horizon with their last reason', () => {
    const machines = [
      machine('down', { available: false }),
      machine('held', { hold: { reason: 'audit', until: T0 + 90 * 86_400_000 } }),
      machine('ok'),
    ];
    const sched = simulate(snapshot({ machines }), T0, { upgradeMs: MIN, horizonMs: 86_400_000 });
    assert.deepEqual(
      sched.starts.map((x) => x.machine),
      ['ok'],
    );
    assert.deepEqual(sched.unscheduled.map((u) => [u.machine, u.reason.code]).sort(), [
      ['down', 'MachineUnavailable'],
      ['held', 'Held'],
    ]);
  });

  it('lets machines already in flight finish first', () => {
    const s = snapshot({
      policies: [{ kind: 'concurrency', limit: { count: 1 } }],
      rollouts: [rollout({ machines: { w00: { phase: 'InFlight', startedAt: T0 - 5 * MIN } } })],
    });
    const sched = simulate(s, T0, { upgradeMs: 10 * MIN });
    assert.deepEqual(startTimes(sched), [5 * MIN, 15 * MIN, 25 * MIN]);
  });
});

/** Rebuilds the snapshot just before and just after the starts at `t`, from the schedule. */
function stateAt(s: FleetSnapshot, sched: Schedule, t: number, upgradeMs: number) {
  const progress = new Map<string, Record<string, MachineProgress>>();
  for (const r of s.rollouts) {
    const own: Record<string, MachineProgress> = {};
    for (const [id, p] of Object.entries(r.machines)) {
      const finish = Math.max((p.startedAt ?? T_PROP) + upgradeMs, T_PROP);
      own[id] =
        p.phase === 'InFlight' && finish <= t
          ? { ...p, phase: 'Succeeded', finishedAt: finish }
          : p;
    }
    progress.set(r.id, own);
  }
  const byId = new Map(s.machines.map((m) => [m.id, m]));
  const history = [...s.starts];
  for (const x of sched.starts.filter((e) => e.startAt < t)) {
    progress.get(x.rollout)![x.machine] =
      x.finishAt <= t
        ? { phase: 'Succeeded', startedAt: x.startAt, finishedAt: x.finishAt }
        : { phase: 'InFlight', startedAt: x.startAt };
    history.push({
      machine: x.machine,
      pool: byId.get(x.machine)!.pool,
      rollout: x.rollout,
      at: x.startAt,
    });
  }
  const before: FleetSnapshot = {
    ...s,
    rollouts: s.rollouts.map((r) => ({ ...r, machines: { ...progress.get(r.id) } })),
    starts: history,
  };
  const now = sched.starts.filter((e) => e.startAt === t);
  const decisions: MachineDecision[] = now.map((x) => ({
    rollout: x.rollout,
    machine: x.machine,
    action: 'start',
    batch: x.batch,
  }));
  for (const x of now) progress.get(x.rollout)![x.machine] = { phase: 'InFlight', startedAt: t };
  const starts = [
    ...history,
    ...now.map((x) => ({
      machine: x.machine,
      pool: byId.get(x.machine)!.pool,
      rollout: x.rollout,
      at: t,
    })),
  ];
  const after: FleetSnapshot = {
    ...s,
    rollouts: s.rollouts.map((r) => ({ ...r, machines: { ...progress.get(r.id) } })),
    starts,
  };
  const plan: Plan = { at: t, decisions, rollouts: [] };
  return { before, after, plan };
}

describe('simulate (properties)', () => {
  it('predicts a schedule that obeys every limit, window and control-plane rule', () => {
    const upgradeMs = 25 * MIN;
    let total = 0;
    fc.assert(
      fc.property(snapshotArb, (s) => {
        const sched = simulate(s, T_PROP, { upgradeMs, horizonMs: 3 * 86_400_000 });
        assert.deepEqual(simulate(s, T_PROP, { upgradeMs, horizonMs: 3 * 86_400_000 }), sched);
        total += sched.starts.length;
        for (const t of new Set(sched.starts.map((x) => x.startAt))) {
          const { before, after, plan } = stateAt(s, sched, t, upgradeMs);
          for (const check of [
            eligibleStarts,
            concurrencyLimits,
            rateLimits,
            windowsOpen,
            controlPlane,
          ]) {
            check(before, after, plan, t);
          }
        }
      }),
      { numRuns: 120 },
    );
    assert.ok(total > 200, `only ${total} starts predicted`);
  });
});
