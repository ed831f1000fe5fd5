// SPDX-License-Identifier: Apache-2.0
// One example per admission check of ADR 0005 §2, plus the non-pending decisions and verdicts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  codeOf,
  decisionOf,
  failed,
  HOUR,
  inFlight,
  machine,
  MIN,
  NEW,
  rollout,
  snapshot,
  started,
  succeeded,
  T0,
  workers,
} from './fixtures.test.ts';
import { explain, plan } from './plan.ts';
import { limitOf } from './rules.ts';
import { WaitReason, type FleetSnapshot, type Machine, type Rollout } from './types.ts';

const waitingCodes = (s: FleetSnapshot, now = T0): (string | undefined)[] =>
  plan(s, now)
    .decisions.filter((d) => d.action === 'wait')
    .map((d) => d.reason?.code);

describe('plan: machines and rollout state', () => {
  it('starts every pending machine when no policy limits it', () => {
    const p = plan(snapshot(), T0);
    assert.equal(started(p).length, 4);
    assert.deepEqual(p.rollouts, [{ rollout: 'r1', verdict: 'continue' }]);
  });

  for (const [state, code] of [
    ['Paused', WaitReason.Paused],
    ['AwaitingApproval', WaitReason.AwaitingApproval],
    ['Halted', WaitReason.Halted],
  ] as const) {
    it(`starts nothing in a ${state} rollout`, () => {
      const s = snapshot({ rollouts: [rollout({ state })] });
      assert.deepEqual(waitingCodes(s), [code, code, code, code]);
    });
  }

  it('moves only the machines a targeted rollout names, and completes when they are done (ADR 0014)', () => {
    const targeted = rollout({ only: ['w02'] });
    const p = plan(snapshot({ rollouts: [targeted] }), T0);
    assert.deepEqual(started(p), ['w02']);
    const others = p.decisions.filter((d) => d.machine !== 'w02');
    assert.deepEqual(
      others.map((d) => [d.action, d.reason?.code]),
      others.map(() => ['skipped', 'NotTargeted']),
    );
    const done = rollout({ only: ['w02'], machines: { w02: succeeded(T0 - MIN) } });
    assert.deepEqual(plan(snapshot({ rollouts: [done] }), T0).rollouts, [
      {
        rollout: 'r1',
        verdict: 'complete',
        message: 'every machine finished (0 failures)',
      },
    ]);
  });

  it('holds a machine until the hold expires', () => {
    const machines = [machine('a', { hold: { reason: 'disk swap', until: T0 + HOUR } })];
    const s = snapshot({ machines });
    const d = decisionOf(plan(s, T0), 'a');
    assert.equal(d.reason?.code, WaitReason.Held);
    assert.equal(d.notBefore, T0 + HOUR);
    assert.match(d.reason.message, /disk swap/);
    assert.deepEqual(started(plan(s, T0 + HOUR)), ['a']);
  });

  it('finishes without a held machine in a pool with onHold: skip, and takes it again once the hold ends', () => {
    const held = { hold: { reason: 'disk swap', until: T0 + HOUR } };
    const machines = [machine('a', held), machine('b')];
    const pools = [{ name: 'workers', policies: [], onHold: 'skip' as const }];
    const done = rollout({ machines: { b: succeeded(T0 - MIN) } });
    const p = plan(snapshot({ machines, pools, rollouts: [done] }), T0);
    const a = decisionOf(p, 'a');
    assert.deepEqual([a.action, a.reason?.code], ['skipped', 'Held']);
    assert.match(
      a.reason?.message ?? '',
      /^held until .*: disk swap; the pool finishes without it \(onHold: skip\) and catches it up when the hold ends$/,
    );
    assert.deepEqual(p.rollouts, [
      {
        rollout: 'r1',
        verdict: 'complete',
        message: 'every machine finished (0 failures)',
      },
    ]);
    // The default waits: the rollout stays open on the held machine.
    const waits = plan(snapshot({ machines, rollouts: [done] }), T0);
    assert.deepEqual(waits.rollouts, [{ rollout: 'r1', verdict: 'continue' }]);
    // The hold over while the rollout still runs: it starts like any other.
    const later = plan(snapshot({ machines, pools, rollouts: [rollout()] }), T0 + HOUR);
    assert.deepEqual(started(later).sort(), ['a', 'b']);
  });

  it('starts nothing while a health gate fails or has not been checked, and everything once it passes', () => {
    const policies = [
      { kind: 'gate' as const, name: 'api', url: 'https://status.example/healthz' },
    ];
    const unchecked = snapshot({ policies });
    assert.deepEqual(waitingCodes(unchecked), Array(4).fill(WaitReason.GateFailing));
    assert.match(
      decisionOf(plan(unchecked, T0), 'w00').reason?.message ?? '',
      /gate api not checked yet/,
    );
    const failing = snapshot({ policies, gates: { api: { ok: false, message: 'HTTP 503' } } });
    assert.match(
      decisionOf(plan(failing, T0), 'w00').reason?.message ?? '',
      /gate api failing: HTTP 503/,
    );
    const passing = snapshot({ policies, gates: { api: { ok: true, message: 'HTTP 200' } } });
    assert.equal(started(plan(passing, T0)).length, 4);
  });

  it('never starts a machine that is down', () => {
    const s = snapshot({ machines: [machine('a', { available: false })] });
    assert.equal(codeOf(plan(s, T0), 'a'), WaitReason.MachineUnavailable);
  });

  it('skips machines pinned to another version and machines already on the target', () => {
    const machines = [
      machine('pinned', { pin: { version: '1.0.0', reason: 'driver' } }),
      machine('pinned-to-target', { pin: { version: '2.0.0', reason: 'early' } }),
      machine('current', { digest: NEW }),
    ];
    const p = plan(snapshot({ machines }), T0);
    assert.equal(decisionOf(p, 'pinned').action, 'skipped');
    assert.equal(codeOf(p, 'pinned'), 'Pinned');
    assert.equal(codeOf(p, 'current'), 'AlreadyOnTarget');
    assert.deepEqual(started(p), ['pinned-to-target']);
  });

  it('never downgrades: a machine newer than the target is skipped, except by a fleet rollback', () => {
    const machines = [
      machine('ahead', { version: '2.1.0' }),
      machine('behind', { version: '1.0.0' }),
      machine('unknown', { version: undefined }),
    ];
    const p = plan(snapshot({ machines }), T0);
    assert.equal(decisionOf(p, 'ahead').action, 'skipped');
    assert.equal(codeOf(p, 'ahead'), 'AheadOfTarget');
    assert.deepEqual(started(p).sort(), ['behind', 'unknown']);
    const back = plan(snapshot({ machines, rollouts: [rollout({ rollbackOf: 'r0' })] }), T0);
    assert.deepEqual(started(back).sort(), ['ahead', 'behind', 'unknown']);
  });

  it('reports in-flight, soaking, done and failed machines and does not restart them', () => {
    const s = snapshot({
      policies: [
        { kind: 'machine-soak', soakMs: 20 * MIN },
        { kind: 'failure-budget', maxFailed: 2 },
      ],
      rollouts: [
        rollout({
          machines: {
            w00: inFlight(),
            w01: succeeded(T0 - 10 * MIN),
            w02: succeeded(T0 - HOUR),
            w03: failed(T0 - HOUR),
          },
        }),
      ],
    });
    const p = plan(s, T0);
    assert.deepEqual(
      ['w00', 'w01', 'w02', 'w03'].map((id) => decisionOf(p, id).action),
      ['in-flight', 'soaking', 'done', 'failed'],
    );
    assert.equal(decisionOf(p, 'w01').notBefore, T0 + 10 * MIN);
    assert.equal(p.rollouts[0]?.verdict, 'continue');
    assert.equal(plan(s, T0 + 10 * MIN).rollouts[0]?.verdict, 'continue');
  });

  it('halts a rollout whose failure budget is spent and starts nothing more', () => {
    const s = snapshot({ rollouts: [rollout({ machines: { w00: failed(T0 - MIN) } })] });
    const p = plan(s, T0);
    assert.equal(p.rollouts[0]?.verdict, 'halt');
    assert.deepEqual(started(p), []);
    assert.deepEqual(waitingCodes(s), [WaitReason.Halted, WaitReason.Halted, WaitReason.Halted]);
    const budget2 = {
      ...s,
      pools: [{ name: 'workers', policies: [{ kind: 'failure-budget', maxFailed: 2 } as const] }],
    };
    assert.equal(started(plan(budget2, T0)).length, 3);
  });

  it('completes a rollout when every machine is done or skipped', () => {
    const done = Object.fromEntries(['w00', 'w01', 'w02'].map((id) => [id, succeeded(T0 - HOUR)]));
    const machines = [...workers(3), machine('w09', { digest: NEW })];
    const p = plan(snapshot({ machines, rollouts: [rollout({ machines: done })] }), T0);
    assert.equal(p.rollouts[0]?.verdict, 'complete');
  });

  it('goes on past a machine its drain quarantined: Skipped is not a failure, and it completes', () => {
    const quarantined = {
      phase: 'Skipped' as const,
      startedAt: T0 - 2 * MIN,
      finishedAt: T0 - MIN,
      reason: 'MOLT_DRAIN_QUARANTINED: pods stayed',
    };
    const s = snapshot({ rollouts: [rollout({ machines: { w00: quarantined } })] });
    const p = plan(s, T0);
    assert.equal(p.rollouts[0]?.verdict, 'continue', 'the default budget of 1 is not spent');
    assert.equal(started(p).length, 3);
    assert.deepEqual(decisionOf(p, 'w00').reason, {
      code: 'Skipped',
      message: 'MOLT_DRAIN_QUARANTINED: pods stayed',
    });
    assert.equal(decisionOf(p, 'w00').action, 'skipped');
    const rest = Object.fromEntries(['w01', 'w02', 'w03'].map((id) => [id, succeeded(T0 - MIN)]));
    const done = snapshot({ rollouts: [rollout({ machines: { w00: quarantined, ...rest } })] });
    const [verdict] = plan(done, T0).rollouts;
    assert.ok(verdict !== undefined);
    assert.equal(verdict.verdict, 'complete');
    assert.match(verdict.message ?? '', /0 failures, 1 machine skipped/);
  });

  it('admits machines of the older rollout first', () => {
    const machines = workers(2);
    const rollouts: Rollout[] = [
      rollout({ id: 'young', createdAt: T0 - MIN }),
      rollout({
        id: 'old',
        createdAt: T0 - HOUR,
        target: { version: '1.5.0', digest: 'sha256:mid' },
      }),
    ];
    const p = plan(
      snapshot({ machines, rollouts, policies: [{ kind: 'concurrency', limit: { count: 5 } }] }),
      T0,
    );
    assert.deepEqual(
      p.rollouts.map((r) => r.rollout),
      ['old', 'young'],
    );
    assert.ok(p.decisions.filter((d) => d.rollout === 'old').every((d) => d.action === 'start'));
    assert.ok(
      p.decisions
        .filter((d) => d.rollout === 'young')
        .every((d) => d.reason?.code === WaitReason.MachineUnavailable),
    );
  });
});

describe('plan: limits', () => {
  it('rounds a percentage up, with at least one machine', () => {
    assert.equal(limitOf({ kind: 'concurrency', limit: { percent: 25 } }, 12), 3);
    assert.equal(limitOf({ kind: 'concurrency', limit: { percent: 10 } }, 4), 1);
    assert.equal(limitOf({ kind: 'concurrency', limit: { percent: 1 } }, 0), 1);
    assert.equal(limitOf({ kind: 'concurrency', limit: { percent: 26 } }, 12), 4);
    assert.equal(limitOf({ kind: 'concurrency', limit: { percent: 7 } }, 100), 7);
  });

  it('starts no more machines than the concurrency limit and says why', () => {
    const s = snapshot({
      machines: workers(12),
      policies: [{ kind: 'concurrency', limit: { percent: 25 } }],
    });
    const p = plan(s, T0);
    assert.equal(started(p).length, 3);
    const wait = p.decisions.find((d) => d.action === 'wait');
    assert.equal(
      wait?.reason?.message,
      '3 of 3 machines of pool workers unavailable (limit 3 = 25% of 12)',
    );
  });

  it('counts down, in-flight and soaking machines of every rollout against the limit', () => {
    const machines = [...workers(4), machine('x', { available: false })];
    const other = rollout({
      id: 'r0',
      createdAt: T0 - 2 * HOUR,
      state: 'Paused',
      machines: { w00: inFlight() },
    });
    const s = snapshot({
      machines,
      rollouts: [other, rollout()],
      policies: [{ kind: 'concurrency', limit: { count: 2 } }],
    });
    assert.deepEqual(started(plan(s, T0)), []);
  });

  it('moves two machines Cluster API asks for at once one at a time under concurrency 1 (ADR 0014)', () => {
    // CAPI's MachineDeployment with maxUnavailable 2 calls UpdateMachine for two Machines at
    // once: two targeted rollouts of one pool, and the pool's limit counts both.
    const capi = (id: string, only: string, createdAt: number) =>
      rollout({ id, only: [only], createdAt });
    const policies = [{ kind: 'concurrency' as const, limit: { count: 1 } }];
    const both = [capi('capi-w01', 'w01', T0 - 2 * MIN), capi('capi-w02', 'w02', T0 - MIN)];
    assert.deepEqual(started(plan(snapshot({ rollouts: both, policies }), T0)), ['w01']);
    const first = { ...both[0], machines: { w01: inFlight() } } as Rollout;
    const next = plan(snapshot({ rollouts: [first, both[1] as Rollout], policies }), T0);
    assert.deepEqual(started(next), [], 'w02 waits while w01 is in flight');
  });

  it('counts a fleet limit over every pool', () => {
    const machines = [...workers(2), ...workers(2, 'db')];
    const s = snapshot({
      machines,
      fleetPolicies: [{ kind: 'concurrency', limit: { count: 1 } }],
      rollouts: [rollout({ id: 'rdb', pool: 'db', machines: { d00: inFlight() } }), rollout()],
    });
    const p = plan(s, T0);
    assert.deepEqual(started(p), []);
    assert.match(
      decisionOf(p, 'w00').reason?.message ?? '',
      /of the fleet unavailable \(limit 1\)/,
    );
  });

  it('limits the starts in a sliding window counted from the history', () => {
    const policies = [{ kind: 'rate', count: 2, periodMs: HOUR } as const];
    const starts = [
      { machine: 'z', pool: 'workers', rollout: 'r0', at: T0 - HOUR }, // left the window
      { machine: 'y', pool: 'workers', rollout: 'r0', at: T0 - 50 * MIN },
    ];
    const p = plan(snapshot({ policies, starts }), T0);
    assert.equal(started(p).length, 1);
    const wait = p.decisions.find((d) => d.action === 'wait');
    assert.equal(wait?.reason?.code, WaitReason.RateLimited);
    assert.equal(wait.notBefore, T0 + 10 * MIN);
    const full = plan(
      snapshot({ policies, starts: [...starts, { ...starts[1]!, at: T0 - MIN }] }),
      T0,
    );
    assert.deepEqual(started(full), []);
  });
});

describe('plan: windows', () => {
  const nightly = (timeZone?: string): FleetSnapshot =>
    snapshot({
      policies: [
        {
          kind: 'window',
          windows: [
            {
              cron: '0 2 * * *',
              durationMs: HOUR,
              ...(timeZone === undefined ? {} : { timeZone }),
            },
          ],
        },
      ],
      rollouts: [rollout({ machines: { w00: inFlight() } })],
    });

  it('waits for the window to open, with its opening as notBefore', () => {
    const p = plan(nightly('Europe/Berlin'), T0);
    const d = decisionOf(p, 'w01');
    assert.equal(d.reason?.code, WaitReason.WindowClosed);
    assert.equal(d.notBefore, Date.parse('2026-11-24T01:00:00.000Z'));
    assert.equal(
      d.reason.message,
      'window closed; opens 2026-11-24T01:00:00Z (Europe/Berlin 02:00)',
    );
    assert.equal(decisionOf(p, 'w00').action, 'in-flight', 'a machine in flight always completes');
  });

  it('starts inside the window and not at its end', () => {
    const open = Date.parse('2026-11-24T02:00:00.000Z');
    assert.equal(started(plan(nightly(), open)).length, 3);
    assert.equal(started(plan(nightly(), open + HOUR - 1)).length, 3);
    assert.equal(started(plan(nightly(), open + HOUR)).length, 0);
  });
});

describe('plan: rollout shape', () => {
  it('runs the canaries alone, then waits for the canary soak', () => {
    const policies = [{ kind: 'canary', count: 1, soakMs: 30 * MIN } as const];
    const p1 = plan(snapshot({ policies }), T0);
    const [canary] = started(p1);
    assert.equal(started(p1).length, 1);
    assert.equal(decisionOf(p1, canary!).batch, 0);
    // None has started yet: the others wait for it to run, not for a run that is not happening.
    assert.deepEqual(
      waitingCodes(snapshot({ policies }), T0),
      Array(3).fill(WaitReason.CanaryPending),
    );
    const running = snapshot({
      policies,
      rollouts: [rollout({ machines: { [canary!]: inFlight() } })],
    });
    assert.deepEqual(waitingCodes(running, T0), Array(3).fill(WaitReason.CanaryRunning));
    const s2 = snapshot({
      policies,
      rollouts: [rollout({ machines: { [canary!]: succeeded(T0) } })],
    });
    const p2 = plan(s2, T0 + 10 * MIN);
    assert.deepEqual(started(p2), []);
    assert.ok(
      p2.decisions.filter((d) => d.action === 'wait').every((d) => d.notBefore === T0 + 30 * MIN),
    );
    assert.deepEqual(waitingCodes(s2, T0 + 10 * MIN), Array(3).fill(WaitReason.CanarySoaking));
    assert.equal(started(plan(s2, T0 + 30 * MIN)).length, 3);
  });

  it('goes in waves of the concurrency limit, each after the previous one is done and soaked', () => {
    const policies = [
      { kind: 'concurrency', limit: { count: 2 } } as const,
      { kind: 'batches', soakMs: 10 * MIN } as const,
    ];
    const s = snapshot({ machines: workers(6), policies });
    const p1 = plan(s, T0);
    assert.deepEqual(
      p1.decisions.map((d) => d.batch),
      [1, 1, 2, 2, 3, 3],
    );
    const [a, b] = started(p1);
    const order = p1.decisions.map((d) => d.machine);
    const half = snapshot({
      machines: workers(6),
      policies,
      rollouts: [rollout({ machines: { [a!]: succeeded(T0), [b!]: inFlight() } })],
    });
    assert.equal(codeOf(plan(half, T0), order[2]!), WaitReason.BatchRunning);
    const done = snapshot({
      machines: workers(6),
      policies,
      rollouts: [rollout({ machines: { [a!]: succeeded(T0), [b!]: succeeded(T0 + MIN) } })],
    });
    const soaking = decisionOf(plan(done, T0 + 5 * MIN), order[2]!);
    assert.equal(soaking.reason?.code, WaitReason.BatchSoaking);
    assert.equal(soaking.notBefore, T0 + 11 * MIN);
    assert.deepEqual(started(plan(done, T0 + 11 * MIN)), order.slice(2, 4));
  });

  it('upgrades one zone at a time, in the given order', () => {
    const zoned = (id: string, zone: string): Machine => machine(id, { labels: { zone } });
    const machines = [
      zoned('a1', 'a'),
      zoned('b1', 'b'),
      zoned('b2', 'b'),
      zoned('c1', 'c'),
      machine('n1'),
    ];
    const policies = [{ kind: 'zones', label: 'zone', order: ['b'] } as const];
    const p = plan(snapshot({ machines, policies }), T0);
    assert.deepEqual(started(p).sort(), ['b1', 'b2']);
    assert.deepEqual(p.decisions.map((d) => d.machine).slice(2), ['a1', 'c1', 'n1']);
    assert.match(decisionOf(p, 'a1').reason?.message ?? '', /zone a waits for zone b/);
    const next = snapshot({
      machines,
      policies,
      rollouts: [rollout({ machines: { b1: succeeded(T0), b2: succeeded(T0) } })],
    });
    assert.deepEqual(started(plan(next, T0)), ['a1']);
  });

  it('does not let a machine that is down hold back the next zone, nor be picked as a canary', () => {
    const zoned = (id: string, zone: string, over: Partial<Machine> = {}): Machine =>
      machine(id, { labels: { zone }, ...over });
    const machines = [zoned('a1', 'a', { available: false }), zoned('a2', 'a'), zoned('b1', 'b')];
    const policies = [{ kind: 'zones', label: 'zone' } as const];
    const done = rollout({ machines: { a2: succeeded(T0 - HOUR) } });
    const p = plan(snapshot({ machines, policies, rollouts: [done] }), T0);
    assert.deepEqual(started(p), ['b1']);
    assert.equal(codeOf(p, 'a1'), WaitReason.MachineUnavailable);
    const canaryFirst = plan(
      snapshot({ machines, policies: [{ kind: 'canary', count: 1, soakMs: 0 }] }),
      T0,
    );
    const canaryId = canaryFirst.decisions[0]!.machine;
    const downCanary = machines.map((m) =>
      m.id === canaryId ? { ...m, available: false } : { ...m, available: true },
    );
    const held = plan(
      snapshot({ machines: downCanary, policies: [{ kind: 'canary', count: 1, soakMs: 0 }] }),
      T0,
    );
    // Issue 16: the canary is one that can start; the down machine joins a wave later.
    assert.equal(started(held).length, 1);
    assert.notEqual(started(held)[0], canaryId);
    assert.equal(decisionOf(held, canaryId).batch, 1);
  });

  it('keeps a canary that started as the canary, and never picks a held machine', () => {
    const policies = [{ kind: 'canary', count: 1, soakMs: 0 } as const];
    const machines = workers(4);
    const first = plan(snapshot({ machines, policies }), T0);
    const canary = first.decisions.find((d) => d.batch === 0)!.machine;
    const held = machines.map((m) =>
      m.id === canary ? { ...m, hold: { reason: 'investigating', until: T0 + HOUR } } : m,
    );
    const p = plan(snapshot({ machines: held, policies }), T0);
    assert.equal(codeOf(p, canary), WaitReason.Held);
    assert.equal(decisionOf(p, canary).batch, 1, 'the held machine is not a canary');
    const [next] = started(p);
    assert.ok(next !== undefined && next !== canary, 'another machine canaries now');
    // Once it runs it stays the canary, even when the held machine is free again.
    const running = rollout({ machines: { [next]: inFlight() } });
    const later = plan(snapshot({ machines, policies, rollouts: [running] }), T0);
    assert.equal(decisionOf(later, next).batch, 0);
    assert.deepEqual(started(later), [], 'the waves wait for the running canary');
  });

  it('lets a machine in only when the phased fraction reaches its wariness', () => {
    const machines = [machine('low', { wariness: 0.05 }), machine('mid', { wariness: 0.5 })];
    const phased = { startFraction: 0, durationMs: 10 * HOUR };
    const s = snapshot({ machines, rollouts: [rollout({ createdAt: T0, phased })] });
    const p = plan(s, T0 + HOUR);
    assert.deepEqual(started(p), ['low']);
    assert.equal(codeOf(p, 'mid'), WaitReason.PhasedNotYet);
    assert.equal(decisionOf(p, 'mid').notBefore, T0 + 5 * HOUR);
    assert.deepEqual(started(plan(s, T0 + 5 * HOUR)), ['low', 'mid']);
  });
});

describe('plan: control plane', () => {
  const cp = (id: string, over: Partial<Machine> = {}): Machine =>
    machine(id, { role: 'control-plane', pool: 'cp', ...over });
  const fleet = (
    over: Partial<FleetSnapshot> = {},
    cps: Machine[] = [cp('cp1'), cp('cp2'), cp('cp3')],
  ): FleetSnapshot =>
    snapshot({
      machines: [...cps, ...workers(2), machine('other', { cluster: 'b' })],
      pools: [
        { name: 'cp', policies: [] },
        { name: 'workers', policies: [{ kind: 'control-plane-first' }] },
      ],
      rollouts: [rollout({ id: 'rcp', pool: 'cp', createdAt: T0 - 2 * HOUR }), rollout()],
      ...over,
    });

  it('upgrades one control-plane machine at a time, before the workers of its cluster', () => {
    const p = plan(fleet(), T0);
    assert.equal(started(p).filter((id) => id.startsWith('cp')).length, 1);
    assert.deepEqual(
      p.decisions
        .filter((d) => d.rollout === 'rcp' && d.action === 'wait')
        .map((d) => d.reason?.code),
      [WaitReason.ControlPlaneBusy, WaitReason.ControlPlaneBusy],
    );
    assert.equal(codeOf(p, 'w00'), WaitReason.ControlPlaneFirst);
    assert.equal(decisionOf(p, 'other').action, 'start', 'another cluster does not wait');
    const done = { cp1: succeeded(T0), cp2: succeeded(T0), cp3: succeeded(T0) };
    const after = fleet({
      rollouts: [rollout({ id: 'rcp', pool: 'cp', machines: done }), rollout()],
    });
    assert.equal(started(plan(after, T0)).length, 3);
  });

  it('starts no control-plane machine while another one is down (quorum)', () => {
    const p = plan(fleet({}, [cp('cp1', { available: false }), cp('cp2'), cp('cp3')]), T0);
    assert.equal(codeOf(p, 'cp2', 'rcp'), WaitReason.QuorumAtRisk);
    assert.equal(codeOf(p, 'cp1', 'rcp'), WaitReason.MachineUnavailable);
  });

  it('respects the cluster lease: only its holder may start', () => {
    const p = plan(fleet({ leases: { default: 'cp3' } }), T0);
    assert.deepEqual(
      started(p).filter((id) => id.startsWith('cp')),
      ['cp3'],
    );
    const foreign = plan(fleet({ leases: { default: 'someone' } }), T0);
    assert.ok(
      ['cp1', 'cp2', 'cp3'].every(
        (id) => codeOf(foreign, id, 'rcp') === WaitReason.ControlPlaneBusy,
      ),
    );
  });
});

describe('plan: determinism and explain', () => {
  it('gives the same plan for the same input, whatever the machine order', () => {
    const s = snapshot({
      machines: workers(20),
      policies: [{ kind: 'concurrency', limit: { count: 3 } }],
    });
    assert.deepEqual(plan(s, T0), plan(s, T0));
    assert.deepEqual(plan({ ...s, machines: [...s.machines].reverse() }, T0), plan(s, T0));
  });

  it('lists every refusing check', () => {
    const policies = [
      { kind: 'concurrency', limit: { count: 1 } } as const,
      { kind: 'window', windows: [{ cron: '0 2 * * *', durationMs: HOUR }] } as const,
    ];
    const s = snapshot({ policies, rollouts: [rollout({ machines: { w00: inFlight() } })] });
    const all = explain(s, T0)
      .get('r1/w01')
      ?.map((r) => r.code);
    assert.deepEqual(all, [WaitReason.WindowClosed, WaitReason.ConcurrencyFull]);
  });
});
