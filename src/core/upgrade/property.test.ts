// SPDX-License-Identifier: Apache-2.0
// Random runs of the model runner (model.test.ts): requests, successes, failures at any command,
// agent restarts in the same boot, power cuts with the trial slot booting or not, firmware
// surprises, clocks jumping past deadlines. Every fed event must be legal, the safety
// invariants hold at every step (checked by the model), and every run can be finished.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CommandType } from './commands.ts';
import type { UpgradeEvent } from './events.ts';
import { Phases } from './phase.ts';
import { admission, isIllegal, transition } from './transition.ts';
import { request } from './harness.test.ts';
import { World } from './model.test.ts';

/** Every command type (the `Record` makes the compiler check the list is complete). */
const COMMAND_TYPES = Object.keys({
  PullImage: 1,
  CheckStagedImage: 1,
  VerifyRollbackTarget: 1,
  AcquireLease: 1,
  CheckQuorum: 1,
  Cordon: 1,
  Drain: 1,
  StopServices: 1,
  LeaveEtcd: 1,
  ReleaseMounts: 1,
  MarkSlotUnbootable: 1,
  WriteSlot: 1,
  VerifySlot: 1,
  WriteBootEntry: 1,
  MarkSlotReady: 1,
  ArmBootOnce: 1,
  DisarmBootOnce: 1,
  ExtendLeaseForReboot: 1,
  Reboot: 1,
  WipeEphemeral: 1,
  StartServices: 1,
  RejoinEtcd: 1,
  RunHealthChecks: 1,
  Commit: 1,
  MarkSlotBad: 1,
  MountEphemeral: 1,
  Uncordon: 1,
  ReleaseLease: 1,
  DiscardPull: 1,
} satisfies Record<CommandType, 1>) as CommandType[];

const slot = fc.constantFrom('A' as const, 'B' as const);
const phase = fc.constantFrom(...Phases);
const code = fc.constantFrom('MOLT_X', 'MOLT_TIMED_OUT', 'MOLT_MOUNT_BUSY', 'MOLT_LEASE_HELD');

/** Any event at all, legal or not: transition must answer, never throw. */
const anyEvent: fc.Arbitrary<UpgradeEvent> = fc.oneof(
  fc.record({ type: fc.constant('Tick' as const) }),
  fc.record({ type: fc.constant('Discarded' as const), by: fc.constant('admin') }),
  fc.record({
    type: fc.constant('Booted' as const),
    bootId: fc.constantFrom('boot-1', 'boot-2', 'boot-x'),
    slot,
  }),
  fc.record({ type: fc.constant('StepDone' as const), phase, outcomes: fc.constant([]) }),
  fc.record({
    type: fc.constant('StepFailed' as const),
    phase,
    command: fc.constantFrom(...COMMAND_TYPES),
    error: fc.record({ code, message: fc.constant('x'), indeterminate: fc.boolean() }),
  }),
  fc.record({
    type: fc.constant('Requested' as const),
    request: fc
      .record({ kind: fc.constantFrom('upgrade' as const, 'rollback' as const, 'reboot' as const) })
      .map((r) => request(r.kind)),
  }),
);

type Action =
  | {
      readonly k: 'request';
      readonly kind: 'upgrade' | 'rollback' | 'reboot';
      readonly preserve: boolean;
      readonly stage: boolean;
      readonly cp: boolean;
      /** An image the staged checks refuse. */
      readonly bad: boolean;
    }
  | { readonly k: 'complete'; readonly trialFails: boolean }
  | {
      readonly k: 'fail';
      readonly at: number;
      readonly code: string;
      readonly indeterminate: boolean;
    }
  | { readonly k: 'restart'; readonly at: number }
  | { readonly k: 'powerCut'; readonly at: number; readonly trialFails: boolean }
  | { readonly k: 'weirdBoot'; readonly slot: 'A' | 'B' }
  | { readonly k: 'tick'; readonly dt: number }
  | { readonly k: 'discard' }
  | { readonly k: 'probe'; readonly event: UpgradeEvent };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('request' as const),
      kind: fc.constantFrom('upgrade' as const, 'rollback' as const, 'reboot' as const),
      preserve: fc.boolean(),
      stage: fc.boolean(),
      cp: fc.boolean(),
      bad: fc.boolean(),
    }),
  },
  {
    weight: 40,
    arbitrary: fc.record({ k: fc.constant('complete' as const), trialFails: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('fail' as const),
      at: fc.nat(9),
      code,
      indeterminate: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('restart' as const), at: fc.nat(9) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('powerCut' as const),
      at: fc.nat(9),
      trialFails: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('weirdBoot' as const), slot }) },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant('tick' as const),
      dt: fc.integer({ min: 0, max: 1500 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('probe' as const), event: anyEvent }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('discard' as const) }) },
);

let opCounter = 0;
/** MOLT_PROPERTY_STATS=1 prints which transitions the runs took (to judge the generators). */
const stats = new Set<string>();
process.on('exit', () => {
  if (process.env['MOLT_PROPERTY_STATS'] !== undefined) console.log([...stats].sort().join('\n'));
});

function act(world: World, a: Action): void {
  switch (a.k) {
    case 'request': {
      const req = request(a.kind, {
        id: `op-${++opCounter}`,
        preserve: a.preserve,
        stage: a.stage,
        controlPlane: a.cp,
      });
      if (a.bad) world.badImages.add(req.id);
      if (admission(world.state, a.kind).ok) world.request(req);
      else
        assert.ok(
          isIllegal(transition(world.state, { type: 'Requested', request: req }, world.now)),
          'busy request must be illegal',
        );
      return;
    }
    case 'complete': {
      world.complete(a.trialFails);
      return;
    }
    case 'fail': {
      world.fail(a.at, a.code, a.indeterminate);
      return;
    }
    case 'restart': {
      world.restart(a.at);
      return;
    }
    case 'powerCut': {
      world.powerCut(a.at, a.trialFails);
      return;
    }
    case 'weirdBoot': {
      world.newBoot(a.slot);
      return;
    }
    case 'tick': {
      world.tick(a.dt);
      return;
    }
    case 'discard': {
      if (world.state.phase === 'Staged') world.discard();
      else
        assert.ok(
          isIllegal(transition(world.state, { type: 'Discarded', by: 'admin' }, world.now)),
          'only a staged upgrade can be discarded',
        );
      return;
    }
    case 'probe': {
      const result = transition(world.state, a.event, world.now);
      assert.ok(isIllegal(result) ? result.reason.length > 0 : Phases.includes(result.state.phase));
      return;
    }
  }
}

/** With nothing failing any more, every operation ends: Idle (a staged one after a reboot request). */
function finish(world: World): void {
  for (let i = 0; i < 200 && world.state.phase !== 'Idle'; i += 1) {
    if (world.state.phase === 'Staged') world.request(request('reboot', { id: 'op-finish' }));
    else if (world.record.length === 0) world.powerCut(0, false);
    else world.complete(false);
  }
  assert.equal(world.state.phase, 'Idle', world.trace.join('\n'));
}

describe('random runs of the state machine', () => {
  it('keep every invariant, feed only legal events, never throw, and always finish', () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 150, size: 'max' }), (actions) => {
        const world = new World();
        for (const a of actions) act(world, a);
        finish(world);
        if (process.env['MOLT_PROPERTY_STATS'] !== undefined)
          for (const line of world.trace) stats.add(line.replace(/boot-\d+/g, 'b'));
      }),
      { numRuns: 400 },
    );
  });

  it('upgrades that only meet crashes and power cuts end Succeeded or RolledBack, never half', () => {
    const crash = fc.oneof(
      fc.record({ k: fc.constant('complete' as const), trialFails: fc.constant(false) }),
      fc.record({ k: fc.constant('restart' as const), at: fc.nat(9) }),
      fc.record({ k: fc.constant('powerCut' as const), at: fc.nat(9), trialFails: fc.boolean() }),
    );
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.boolean(),
        fc.array(crash, { maxLength: 40, size: 'max' }),
        (cp, preserve, actions) => {
          const world = new World();
          world.request(request('upgrade', { id: 'op-u', controlPlane: cp, preserve }));
          for (const a of actions) act(world, a);
          finish(world);
          const last = world.state.last;
          assert.ok(last !== undefined);
          const outcome = `${last.result}/${last.code ?? ''}`;
          // Before the reboot a power cut is an interruption (Failed, undone); after it, the
          // machine either commits the new slot or ends on the old one.
          assert.ok(
            ['Succeeded/', 'Failed/MOLT_INTERRUPTED'].includes(outcome) ||
              last.result === 'RolledBack',
            outcome,
          );
          const running = world.loader.committed;
          if (last.result === 'Succeeded') assert.equal(running, 'B');
          else assert.equal(running, 'A', world.trace.join('\n'));
        },
      ),
      { numRuns: 300 },
    );
  });

  const disruptive = /\b(AcquireLease|Cordon|Drain|StopServices|MarkSlotUnbootable|WriteSlot)\b/;
  const crashes = fc.oneof(
    fc.record({ k: fc.constant('complete' as const), trialFails: fc.constant(false) }),
    fc.record({ k: fc.constant('restart' as const), at: fc.nat(9) }),
    fc.record({ k: fc.constant('powerCut' as const), at: fc.nat(9), trialFails: fc.boolean() }),
  );

  it('a refused image disrupts nothing and leaves the other slot ready, with its entry, to roll back to', () => {
    fc.assert(
      fc.property(
        fc.record({ cp: fc.boolean(), preserve: fc.boolean(), stage: fc.boolean() }),
        fc.array(crashes, { maxLength: 20, size: 'max' }),
        (options, actions) => {
          const world = new World();
          world.badImages.add('op-bad');
          world.request(request('upgrade', { id: 'op-bad', controlPlane: options.cp, ...options }));
          for (const a of actions) act(world, a);
          finish(world);
          assert.equal(world.state.last?.result, 'Failed');
          assert.ok(!world.trace.some((l) => disruptive.test(l)), world.trace.join('\n'));
          assert.deepEqual(world.slots.B, { status: 'ready', image: 'initial' });
          assert.ok(!world.loader.unbootable.has('B'), 'slot B keeps its boot entry');
          world.request(request('rollback', { id: 'op-back' }));
          finish(world);
          assert.equal(world.state.last.result, 'RolledBack', world.trace.join('\n'));
          assert.equal(world.loader.committed, 'B');
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a rollback to a slot that is not ready, or has no boot entry, fails before any disruption', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('writing' as const, 'bad' as const, 'no entry' as const),
        fc.boolean(),
        fc.array(crashes, { maxLength: 20, size: 'max' }),
        (damage, cp, actions) => {
          const world = new World();
          if (damage === 'no entry') world.loader.unbootable.add('B');
          else world.slots.B.status = damage;
          world.request(request('rollback', { id: 'op-back', controlPlane: cp }));
          for (const a of actions) act(world, a);
          finish(world);
          assert.ok(!world.trace.some((l) => disruptive.test(l)), world.trace.join('\n'));
          assert.equal(world.loader.committed, 'A');
          const last = world.state.last;
          assert.ok(
            last?.result === 'Failed' &&
              ['MOLT_NO_VALID_SLOT', 'MOLT_INTERRUPTED'].includes(last.code ?? ''),
            JSON.stringify(last),
          );
        },
      ),
      { numRuns: 100 },
    );
  });
});
