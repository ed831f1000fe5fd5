// SPDX-License-Identifier: Apache-2.0
// Operations that fail: boot failure, health deadline, repeated bad boots, aborts at every
// pre-reboot phase with the undo run newest first, crashes, and the busy answer.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from './commands.ts';
import { Phase, Phases } from './phase.ts';
import { CP, DEADLINE_MS, Driver, request, stateIn, types } from './harness.test.ts';
import { admission, isIllegal, MaxRollbackAttempts, transition } from './transition.ts';

describe('the new slot does not boot', () => {
  it('the agent on the previous slot recovers the node and records RolledBack (BootFailed)', () => {
    const d = new Driver('A').request('upgrade', CP).until('Rebooting').boot('A');
    assert.equal(d.phase, 'Recovering');
    assert.deepEqual(d.commands[0], {
      type: 'MarkSlotBad',
      slot: 'B',
      reason: 'MOLT_BOOT_FAILED: slot B did not boot; the bootloader fell back to slot A',
    });
    assert.deepEqual(types(d.commands), [
      'MarkSlotBad',
      'MountEphemeral',
      'StartServices',
      'RejoinEtcd',
      'Uncordon',
      'ReleaseLease',
    ]);
    assert.deepEqual(
      d.commands[3],
      { type: 'RejoinEtcd', asNewMember: true },
      'the member left: it comes back as new',
    );
    d.done();
    assert.equal(d.phase, 'Idle');
    assert.equal(d.last()?.result, 'RolledBack');
    assert.equal(d.last()?.reason, 'BootFailed');
    assert.equal(d.last()?.code, 'MOLT_BOOT_FAILED');
  });

  it('an applied staged slot that fails to boot is rolled back the same way', () => {
    const d = new Driver('A').request('upgrade', { stage: true }).until('Staged');
    d.feed({ type: 'Requested', request: request('reboot', { id: 'op-apply' }) });
    d.until('Rebooting').boot('A');
    assert.equal(d.phase, 'Recovering');
    d.done();
    assert.equal(d.last()?.reason, 'BootFailed');
  });

  it('a trial that panicked says so with the kernel’s words; a root that failed dm-verity is MOLT_VERITY_FAILED', () => {
    const verity = [
      '[    3.1] device-mapper: verity: sha256 using implementation "sha256-generic"',
      '[    3.1] molt-verity: PARTLABEL=molt-b (/dev/vda3) opened verified as /dev/mapper/molt-root',
      '[    3.4] device-mapper: verity: 254:0: data block 0 is corrupted',
      '[    3.4] Kernel panic - not syncing: dm-verity device corrupted',
    ].join('\n');
    const v = new Driver('A').request('upgrade', CP).until('Rebooting').boot('A', verity);
    assert.deepEqual(v.commands[0], {
      type: 'MarkSlotBad',
      slot: 'B',
      reason:
        "MOLT_VERITY_FAILED: slot B did not boot: its root does not match the release's root hash (dm-verity: 254:0: data block 0 is corrupted); the bootloader fell back to slot A",
    });
    v.done();
    assert.equal(v.last()?.code, 'MOLT_VERITY_FAILED');
    assert.equal(v.last()?.reason, 'BootFailed');

    const panic =
      '[    1.2] Kernel panic - not syncing: No working init found.  Try passing init= option';
    const p = new Driver('A').request('upgrade').until('Rebooting').boot('A', panic);
    p.done();
    assert.equal(p.last()?.code, 'MOLT_BOOT_FAILED');
    assert.match(p.last()?.message ?? '', /the kernel panicked \(No working init found\./);

    // A log without a panic (an oops its boot survived) explains nothing about the trial.
    const oops = '[   90.0] BUG: kernel NULL pointer dereference, address: 0000000000000000';
    const o = new Driver('A').request('upgrade').until('Rebooting').boot('A', oops);
    o.done();
    assert.equal(o.last()?.message, 'slot B did not boot; the bootloader fell back to slot A');
  });

  it('a staged slot that no longer verifies when applied fails the operation before anything is disrupted', () => {
    const d = new Driver('A').request('upgrade', { stage: true, controlPlane: true });
    d.until('Staged');
    d.feed({ type: 'Requested', request: request('reboot', { id: 'op-apply' }) });
    assert.equal(d.phase, 'VerifyingSlot');
    d.fail('MOLT_SLOT_VERIFY_FAILED');
    assert.equal(d.phase, 'Idle');
    assert.deepEqual(types(d.commands), ['DiscardPull'], 'no undo: nothing was disrupted or armed');
    assert.equal(d.last()?.code, 'MOLT_SLOT_VERIFY_FAILED');
  });
});

describe('the new slot boots but never becomes healthy', () => {
  it('the deadline passes: mark bad, reboot into the previous slot, record RolledBack (HealthDeadline)', () => {
    const d = new Driver('A').request('upgrade', CP).until('Rebooting');
    d.now = 100;
    d.boot('B').done();
    assert.deepEqual(d.commands, [
      { type: 'RunHealthChecks', slot: 'B', deadline: 100 + DEADLINE_MS },
    ]);
    d.tick(100 + DEADLINE_MS - 1);
    assert.equal(d.phase, 'HealthChecking', 'before the deadline a Tick changes nothing');
    assert.deepEqual(d.commands, []);
    d.tick(100 + DEADLINE_MS);
    assert.equal(d.phase, 'RollingBack');
    assert.deepEqual(types(d.commands), ['MarkSlotBad', 'Reboot']);
    d.boot('A');
    assert.equal(d.phase, 'Recovering');
    d.done();
    assert.equal(d.last()?.result, 'RolledBack');
    assert.equal(d.last()?.reason, 'HealthDeadline');
    assert.equal(d.last()?.code, 'MOLT_HEALTH_DEADLINE');
    // The sentence goes with the word, so a rollout can say why and not only "HealthDeadline".
    assert.match(d.last()?.message ?? '', /^slot B was not healthy within \d+ ms of booting$/);
    assert.deepEqual(d.state.undo, []);
  });

  it('a failing health check (or rejoin) rolls back with its own code', () => {
    const d = new Driver('A')
      .request('upgrade', CP)
      .until('Rebooting')
      .boot('B')
      .fail('MOLT_ETCD_UNHEALTHY', 'RejoinEtcd');
    assert.equal(d.phase, 'RollingBack');
    d.boot('A').done();
    assert.equal(d.last()?.code, 'MOLT_ETCD_UNHEALTHY');
  });

  it(`the target keeps booting: ${MaxRollbackAttempts} attempts, then MOLT_NO_VALID_SLOT, lease released, node left cordoned`, () => {
    const d = new Driver('A')
      .request('upgrade', CP)
      .until('Rebooting')
      .boot('B')
      .fail('MOLT_HEALTH_DEADLINE');
    for (let attempt = 2; attempt <= MaxRollbackAttempts; attempt += 1) {
      d.boot('B');
      assert.equal(d.phase, 'RollingBack');
      assert.equal(d.op()?.rollbackAttempts, attempt);
    }
    d.boot('B');
    assert.equal(d.phase, 'Idle');
    assert.equal(d.last()?.code, 'MOLT_NO_VALID_SLOT');
    assert.deepEqual(d.commands, [{ type: 'ReleaseLease', operationId: 'op-upgrade' }]);
  });

  it('a plain reboot that does not become healthy is aborted (the only slot is never marked bad)', () => {
    const d = new Driver('A')
      .request('reboot')
      .until('Rebooting')
      .boot('A')
      .done()
      .tick(DEADLINE_MS * 10);
    assert.equal(d.phase, 'Aborting');
    assert.deepEqual(types(d.commands), ['Uncordon']);
    d.done();
    assert.equal(d.last()?.result, 'Failed');
    assert.equal(d.last()?.code, 'MOLT_HEALTH_DEADLINE');
  });
});

const u = (operationId: string) => ({ type: 'Uncordon', operationId }) as const;
const r = (operationId: string) => ({ type: 'ReleaseLease', operationId }) as const;
const OP = 'op-upgrade';
/** For a control-plane upgrade without preserve: the undo an abort in each phase runs, in order. */
const UNDO_BY_PHASE: Record<string, Command[]> = {
  AcquiringLease: [r(OP)],
  CheckingQuorum: [r(OP)],
  Cordoning: [u(OP), r(OP)],
  Draining: [u(OP), r(OP)],
  StoppingServices: [{ type: 'StartServices' }, u(OP), r(OP)],
  LeavingEtcd: [{ type: 'RejoinEtcd', asNewMember: true }, { type: 'StartServices' }, u(OP), r(OP)],
  ReleasingMounts: [
    { type: 'MountEphemeral' },
    { type: 'RejoinEtcd', asNewMember: true },
    { type: 'StartServices' },
    u(OP),
    r(OP),
  ],
};
UNDO_BY_PHASE['WritingSlot'] = UNDO_BY_PHASE['ReleasingMounts']!;
UNDO_BY_PHASE['VerifyingSlot'] = UNDO_BY_PHASE['ReleasingMounts']!;
UNDO_BY_PHASE['ArmingBootOnce'] = [
  { type: 'DisarmBootOnce' },
  ...UNDO_BY_PHASE['ReleasingMounts']!,
];
UNDO_BY_PHASE['Rebooting'] = UNDO_BY_PHASE['ArmingBootOnce'];

describe('a step that cannot complete aborts safely', () => {
  for (const [phase, undo] of Object.entries(UNDO_BY_PHASE)) {
    it(`in ${phase}: undoes newest first, then Idle Failed with the step's code`, () => {
      const d = new Driver('A').request('upgrade', CP).until(phase).fail('MOLT_X');
      assert.equal(d.phase, 'Aborting');
      assert.deepEqual(d.commands, undo);
      d.done();
      assert.equal(d.phase, 'Idle');
      const { reason, ...last } = d.last() ?? { reason: undefined };
      assert.deepEqual(last, {
        operationId: OP,
        kind: 'upgrade',
        result: 'Failed',
        code: 'MOLT_X',
        finishedAt: 0,
      });
      assert.match(reason ?? '', /broke/);
      assert.deepEqual(d.commands, [{ type: 'DiscardPull', slot: 'B' }]);
      assert.deepEqual(d.state.undo, []);
    });
  }

  it('in Pulling: node untouched, Idle Failed, the pull discarded', () => {
    const d = new Driver('A').request('upgrade', CP).fail('MOLT_IMAGE_INVALID');
    assert.equal(d.phase, 'Idle');
    assert.equal(d.last()?.code, 'MOLT_IMAGE_INVALID');
    assert.deepEqual(d.commands, [{ type: 'DiscardPull', slot: 'B' }]);
  });

  it('an indeterminate lease acquisition is a failure whose undo releases (only our key)', () => {
    const d = new Driver('A')
      .request('upgrade', CP)
      .until('AcquiringLease')
      .fail('MOLT_TIMED_OUT', 'AcquireLease', { indeterminate: true });
    assert.deepEqual(d.commands, [r(OP)]);
  });

  it('an undo step that fails ends the abort: the rest runs best-effort, the first cause is reported', () => {
    const d = new Driver('A')
      .request('upgrade', CP)
      .until('StoppingServices')
      .fail('MOLT_SERVICE_STOP_FAILED');
    d.fail('MOLT_SERVICE_STOP_FAILED', 'StartServices');
    assert.equal(d.phase, 'Idle');
    assert.deepEqual(d.commands, [u(OP), r(OP), { type: 'DiscardPull', slot: 'B' }]);
    assert.equal(d.last()?.code, 'MOLT_SERVICE_STOP_FAILED');
    assert.match(d.last()?.reason ?? '', /undo step StartServices failed/);
  });

  it('a power cut before the reboot aborts on the next boot and brings everything back', () => {
    const d = new Driver('A').request('upgrade', CP).until('Draining').boot('A');
    assert.equal(d.phase, 'Aborting');
    assert.deepEqual(d.commands, [
      { type: 'MountEphemeral' },
      { type: 'RejoinEtcd', asNewMember: false },
      { type: 'StartServices' },
      u(OP),
      r(OP),
    ]);
    d.done();
    assert.equal(d.last()?.code, 'MOLT_INTERRUPTED');
  });
});

describe('crashes', () => {
  it('an agent restart in the same boot changes nothing in any phase (the runner re-runs the record)', () => {
    const d = new Driver('A').request('upgrade', CP);
    for (let i = 0; i < 20 && d.phase !== 'Idle'; i += 1) {
      const before = d.state;
      const again = transition(
        before,
        { type: 'Booted', bootId: before.bootId!, slot: before.bootedSlot! },
        0,
      );
      assert.ok(!isIllegal(again));
      assert.deepEqual(again, { state: before, commands: [] });
      if (d.phase === 'Rebooting') d.boot('B');
      else d.done();
    }
    assert.equal(d.last()?.result, 'Succeeded');
  });

  it('a power cut after the commit boots the committed target: services back, checked again with a fresh deadline', () => {
    const d = new Driver('A').request('upgrade').until('Rebooting').boot('B').until('Uncordoning');
    d.now = 50_000;
    d.boot('B');
    assert.equal(d.phase, 'Rejoining');
    assert.equal(d.op()?.deadline, 50_000 + DEADLINE_MS);
    d.until('Idle');
    assert.equal(d.last()?.result, 'Succeeded');
  });

  it('a power cut during the trial falls back to the previous slot: RolledBack (RebootedBeforeCommit)', () => {
    const d = new Driver('A').request('upgrade').until('Rebooting').boot('B').done().boot('A');
    assert.equal(d.phase, 'Recovering');
    d.done();
    assert.equal(d.last()?.reason, 'RebootedBeforeCommit');
  });
});

describe('one operation at a time', () => {
  it('Idle admits anything; Staged only a reboot; every other phase answers busy with the running operation', () => {
    for (const phase of Phases) {
      const state = stateIn(phase);
      for (const kind of ['upgrade', 'rollback', 'reboot'] as const) {
        const verdict = admission(state, kind);
        const admitted = phase === Phase.Idle || (phase === Phase.Staged && kind === 'reboot');
        assert.equal(verdict.ok, admitted, `${phase} × ${kind}`);
        if (verdict.ok) continue;
        assert.equal(verdict.code, 'MOLT_AGENT_BUSY');
        assert.deepEqual(verdict.details, {
          operationId: state.op?.id,
          kind: state.op?.kind,
          phase,
        });
        assert.match(verdict.message, new RegExp(state.op?.id ?? 'none'));
      }
    }
  });

  it('a Requested event while busy is illegal, never silently dropped', () => {
    const d = new Driver('A').request('upgrade', { id: 'op-1' });
    const result = transition(
      d.state,
      { type: 'Requested', request: request('reboot', { id: 'op-2' }) },
      0,
    );
    assert.ok(isIllegal(result));
    assert.match(result.reason, /busy.*op-1/);
  });
});
