// SPDX-License-Identifier: Apache-2.0
// Invariants 2 and 3 of DESIGN.md as properties: random fleets, policies and histories, walked
// forward (plan → apply the starts → random completions, failures, outages and clock jumps),
// checked at every step against the naive oracle in arbitraries.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MIN, snapshotArb, T0 } from './arbitraries.test.ts';
import { applyStarts, CHECKS, startsOf } from './invariants.test.ts';
import { plan } from './plan.ts';
import type { FleetSnapshot, MachineProgress, Plan } from './types.ts';

interface Event {
  readonly advanceMin: number;
  readonly rolls: readonly number[];
  readonly flip: number;
  readonly toggle: number;
}

const eventArb: fc.Arbitrary<Event> = fc.record({
  advanceMin: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 30, max: 600 })),
  rolls: fc.array(fc.integer({ min: 0, max: 19 }), { minLength: 8, maxLength: 8 }),
  flip: fc.integer({ min: 0, max: 200 }),
  toggle: fc.integer({ min: 0, max: 20 }),
});

/** Completions, failures, outages, pauses; then the clock moves on. */
function evolve(s: FleetSnapshot, p: Plan, e: Event, now: number): FleetSnapshot {
  let k = 0;
  const rollouts = s.rollouts.map((r, i) => {
    const verdict = p.rollouts.find((v) => v.rollout === r.id)?.verdict;
    let state = verdict === 'halt' ? 'Halted' : verdict === 'complete' ? 'Completed' : r.state;
    if (e.toggle === i)
      state =
        state === 'Active'
          ? 'Paused'
          : state === 'Completed' || state === 'Halted'
            ? state
            : 'Active';
    const machines: Record<string, MachineProgress> = { ...r.machines };
    for (const [id, pr] of Object.entries(machines)) {
      if (pr.phase !== 'InFlight') continue;
      const roll = e.rolls[k++ % e.rolls.length]!;
      if (roll === 0) machines[id] = { ...pr, phase: 'Failed', finishedAt: now };
      else if (roll <= 10) machines[id] = { ...pr, phase: 'Succeeded', finishedAt: now };
    }
    return { ...r, state: state, machines };
  });
  const machines = s.machines.map((m, i) => (i === e.flip ? { ...m, available: !m.available } : m));
  return { ...s, machines, rollouts };
}

let totalStarts = 0;

describe('plan (properties)', () => {
  it('never breaks a limit, a window, the control-plane rules or the rollout shape along a random walk', () => {
    fc.assert(
      fc.property(
        snapshotArb,
        fc.array(eventArb, { minLength: 3, maxLength: 20 }),
        (initial, events) => {
          let s = initial;
          let now = T0;
          for (const e of events) {
            const p = plan(s, now);
            const after = applyStarts(s, p, now);
            for (const check of CHECKS) check(s, after, p, now);
            totalStarts += startsOf(p).length;
            s = evolve(after, p, e, now);
            now += e.advanceMin * MIN;
          }
        },
      ),
      { numRuns: 300 },
    );
    assert.ok(totalStarts > 300, `the walks started only ${totalStarts} machines`);
  });

  it('decides every machine of every rollout exactly once', () => {
    fc.assert(
      fc.property(snapshotArb, (s) => {
        const p = plan(s, T0);
        const expected = s.rollouts.flatMap((r) =>
          s.machines.filter((m) => m.pool === r.pool).map((m) => `${r.id}/${m.id}`),
        );
        assert.deepEqual(
          p.decisions.map((d) => `${d.rollout}/${d.machine}`).sort(),
          expected.sort(),
        );
        for (const d of p.decisions) {
          if (d.action === 'wait') assert.ok(d.reason !== undefined && d.reason.message.length > 0);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('is deterministic and independent of the input order', () => {
    fc.assert(
      fc.property(snapshotArb, fc.integer({ min: 0, max: 600 }), (s, minutes) => {
        const now = T0 + minutes * MIN;
        const p = plan(s, now);
        assert.deepEqual(plan(s, now), p);
        const shuffled = {
          ...s,
          machines: [...s.machines].reverse(),
          rollouts: [...s.rollouts].reverse(),
        };
        assert.deepEqual(plan(shuffled, now), p);
      }),
      { numRuns: 150 },
    );
  });
});
