// SPDX-License-Identifier: Apache-2.0
// Whole operations that succeed: upgrade (worker, control plane with and without preserve),
// staged then reboot, manual rollback, plain reboot.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from './commands.ts';
import { DEADLINE_MS, Driver, request, types } from './harness.test.ts';
import { admission } from './transition.ts';

/** Walk phase by phase, recording each phase and its commands. */
function walk(d: Driver, stopAt: string): string[] {
  const seen: string[] = [`${d.phase}: ${types(d.commands).join(',')}`];
  for (let i = 0; i < 30 && d.phase !== stopAt; i += 1) {
    d.done();
    seen.push(`${d.phase}: ${types(d.commands).join(',')}`);
  }
  return seen;
}

describe('a successful upgrade', () => {
  it('on a 1- or 2-member etcd, extends the lease for the reboot before etcd goes down with the member', () => {
    const d = new Driver('A').request('upgrade', { controlPlane: true, acceptQuorumLoss: true });
    for (let i = 0; i < 30 && d.phase !== 'CheckingQuorum'; i += 1) d.done();
    d.done([{ command: 'CheckQuorum', outcome: 'done', data: { etcdDown: true } }]);
    assert.equal(d.op()?.etcdDown, true);
    const seen = walk(d, 'Rebooting');
    assert.ok(
      seen.includes('StoppingServices: ExtendLeaseForReboot,StopServices'),
      seen.join('\n'),
    );
    assert.equal(seen.at(-1), 'Rebooting: Reboot', 'not extended again once etcd is down');
    const three = new Driver('A').request('upgrade', { controlPlane: true });
    const usual = walk(three, 'Rebooting');
    assert.ok(usual.includes('StoppingServices: StopServices'));
    assert.equal(usual.at(-1), 'Rebooting: ExtendLeaseForReboot,Reboot');
  });

  it('on a control-plane machine, checks quorum with the 2-member override only when accepted or forced', () => {
    const quorumCheck = (o: { acceptQuorumLoss?: boolean; force?: boolean }): unknown => {
      const d = new Driver('A').request('upgrade', { controlPlane: true, ...o });
      for (let i = 0; i < 30 && d.phase !== 'CheckingQuorum'; i += 1) d.done();
      return d.commands.find((c) => c.type === 'CheckQuorum');
    };
    const check = (force: boolean) => ({ type: 'CheckQuorum', preserve: true, force });
    assert.deepEqual(quorumCheck({}), check(false));
    assert.deepEqual(quorumCheck({ acceptQuorumLoss: true }), check(true));
    assert.deepEqual(quorumCheck({ force: true }), check(true));
  });

  it('on a worker, preserving data, walks the issue order and commits the new slot', () => {
    const d = new Driver('A').request('upgrade');
    assert.deepEqual(walk(d, 'Rebooting'), [
      'Pulling: PullImage,CheckStagedImage',
      'Cordoning: Cordon',
      'Draining: Drain',
      'StoppingServices: StopServices',
      'ReleasingMounts: ReleaseMounts',
      'WritingSlot: MarkSlotUnbootable,WriteSlot',
      'VerifyingSlot: VerifySlot',
      'ArmingBootOnce: WriteBootEntry,MarkSlotReady,ArmBootOnce',
      'Rebooting: Reboot',
    ]);
    assert.deepEqual(d.op()?.pulled, { digest: 'sha256:2222', version: '2.0.0' });
    assert.equal(d.op()?.bootIdAtReboot, 'boot-1');
    assert.deepEqual(types(d.state.undo), [
      'Uncordon',
      'StartServices',
      'MountEphemeral',
      'DisarmBootOnce',
    ]);
    d.now = 5000;
    d.boot('B');
    assert.equal(d.op()?.deadline, 5000 + DEADLINE_MS);
    assert.deepEqual(
      types(d.state.undo),
      ['Uncordon'],
      'only the cluster-level undo survives the reboot',
    );
    assert.deepEqual(walk(d, 'Idle'), [
      'Rejoining: MountEphemeral,StartServices',
      'HealthChecking: RunHealthChecks',
      'Committing: Commit',
      'Uncordoning: Uncordon',
      'Idle: ',
    ]);
    assert.deepEqual(d.state.last, {
      operationId: 'op-upgrade',
      kind: 'upgrade',
      result: 'Succeeded',
      finishedAt: 5000,
    });
    assert.deepEqual(d.state.undo, []);
    assert.equal(d.state.op, undefined);
  });

  it('on a control-plane machine without preserve, leaves etcd, wipes and rejoins as a new member', () => {
    const d = new Driver('B').request('upgrade', { controlPlane: true, preserve: false });
    assert.deepEqual(
      walk(d, 'Rebooting').map((s) => s.split(':')[0]),
      [
        'Pulling',
        'AcquiringLease',
        'CheckingQuorum',
        'Cordoning',
        'Draining',
        'StoppingServices',
        'LeavingEtcd',
        'ReleasingMounts',
        'WritingSlot',
        'VerifyingSlot',
        'ArmingBootOnce',
        'Rebooting',
      ],
    );
    assert.deepEqual(d.commands, [
      { type: 'ExtendLeaseForReboot', operationId: 'op-upgrade' },
      { type: 'Reboot' },
    ]);
    d.boot('A');
    assert.deepEqual(d.commands, [
      { type: 'WipeEphemeral', operationId: 'op-upgrade' },
      { type: 'MountEphemeral' },
      { type: 'StartServices' },
      { type: 'RejoinEtcd', asNewMember: true },
    ] satisfies Command[]);
    d.until('Committing');
    assert.deepEqual(d.commands, [{ type: 'Commit', slot: 'A' }]);
    d.until('ReleasingLease');
    assert.deepEqual(d.commands, [{ type: 'ReleaseLease', operationId: 'op-upgrade' }]);
    d.done();
    assert.equal(d.last()?.result, 'Succeeded');
    assert.deepEqual(d.state.undo, []);
  });

  it('on a control-plane machine with preserve, keeps the member (no LeavingEtcd, rejoin as itself)', () => {
    const d = new Driver('A').request('upgrade', { controlPlane: true, preserve: true });
    const phases = walk(d, 'Rebooting').map((s) => s.split(':')[0]);
    assert.ok(!phases.includes('LeavingEtcd'));
    assert.ok(phases.includes('CheckingQuorum'));
    d.boot('B');
    assert.deepEqual(d.commands, [
      { type: 'MountEphemeral' },
      { type: 'StartServices' },
      { type: 'RejoinEtcd', asNewMember: false },
    ]);
    d.until('Idle');
    assert.equal(d.last()?.result, 'Succeeded');
  });
});

describe('a staged upgrade', () => {
  it('writes and verifies the slot without disrupting the node or arming it; the reboot request verifies it again, then disrupts, arms and reboots under the same operation', () => {
    const d = new Driver('A').request('upgrade', { stage: true, controlPlane: true });
    assert.deepEqual(walk(d, 'Staged'), [
      'Pulling: PullImage,CheckStagedImage',
      'WritingSlot: MarkSlotUnbootable,WriteSlot',
      'VerifyingSlot: VerifySlot',
      'Staged: ',
    ]);
    assert.equal(admission(d.state, 'upgrade').ok, false);
    assert.equal(admission(d.state, 'rollback').ok, false);
    assert.deepEqual(admission(d.state, 'reboot'), { ok: true });
    d.feed({
      type: 'Requested',
      request: { ...d.state.op!, id: 'op-reboot', kind: 'reboot', stage: false, force: true },
    });
    assert.equal(d.op()?.id, 'op-upgrade', 'the staged operation continues under its own id');
    assert.equal(d.op()?.force, true);
    assert.deepEqual(d.commands, [{ type: 'VerifySlot', slot: 'B', operationId: 'op-upgrade' }]);
    assert.deepEqual(walk(d, 'Rebooting'), [
      'VerifyingSlot: VerifySlot',
      'AcquiringLease: AcquireLease',
      'CheckingQuorum: CheckQuorum',
      'Cordoning: Cordon',
      'Draining: Drain',
      'StoppingServices: StopServices',
      'ReleasingMounts: ReleaseMounts',
      'ArmingBootOnce: WriteBootEntry,MarkSlotReady,ArmBootOnce',
      'Rebooting: ExtendLeaseForReboot,Reboot',
    ]);
    d.boot('B').until('Idle');
    assert.equal(d.last()?.result, 'Succeeded');
    assert.equal(d.last()?.operationId, 'op-upgrade');
  });

  it('an unplanned reboot boots the committed slot and keeps the staged one, which is applied later', () => {
    const d = new Driver('A').request('upgrade', { stage: true }).until('Staged').boot('A');
    assert.equal(d.phase, 'Staged', 'the staged upgrade waits, it did not fail');
    assert.equal(d.op()?.id, 'op-upgrade');
    assert.equal(d.state.bootedSlot, 'A');
    assert.deepEqual(types(d.commands), ['MountEphemeral', 'StartServices']);
    d.boot('A');
    assert.equal(d.phase, 'Staged', 'and waits across any number of reboots');
    d.feed({ type: 'Requested', request: request('reboot', { id: 'op-apply' }) });
    assert.equal(d.phase, 'VerifyingSlot');
    d.until('Rebooting').boot('B').until('Idle');
    assert.equal(d.last()?.result, 'Succeeded');
    assert.equal(d.last()?.operationId, 'op-upgrade');
  });

  it('can be discarded: the operation ends Failed MOLT_CANCELLED, saying by whom, with nothing else run', () => {
    const d = new Driver('A').request('upgrade', { stage: true }).until('Staged');
    d.feed({ type: 'Discarded', by: 'alice' });
    assert.equal(d.phase, 'Idle');
    assert.deepEqual(d.commands, [{ type: 'DiscardPull', slot: 'B' }]);
    assert.equal(d.last()?.result, 'Failed');
    assert.equal(d.last()?.code, 'MOLT_CANCELLED');
    assert.match(d.last()?.reason ?? '', /^the staged upgrade to .+ was discarded by alice$/);
  });
});

describe('a manual rollback', () => {
  it('checks the other slot, boots it once, commits it after health and ends RolledBack (manual)', () => {
    const d = new Driver('B').request('rollback');
    assert.deepEqual(d.commands, [{ type: 'VerifyRollbackTarget', slot: 'A' }]);
    const phases = walk(d, 'Rebooting').map((s) => s.split(':')[0]);
    assert.deepEqual(phases.slice(-2), ['ArmingBootOnce', 'Rebooting']);
    assert.ok(!phases.includes('WritingSlot') && !phases.includes('Pulling'));
    d.boot('A').until('Committing');
    assert.deepEqual(d.commands, [{ type: 'Commit', slot: 'A' }]);
    d.until('Idle');
    assert.equal(d.last()?.result, 'RolledBack');
    assert.equal(d.last()?.reason, 'manual');
  });
});

describe('a reboot operation', () => {
  it('drains, reboots the booted slot without arming or committing, and uncordons', () => {
    const d = new Driver('A').request('reboot');
    const seen = walk(d, 'Rebooting').concat(walk(d.boot('A'), 'Idle'));
    assert.ok(!seen.some((s) => /ArmBootOnce|Commit|PullImage|WriteSlot/.test(s)), seen.join('\n'));
    assert.equal(d.last()?.result, 'Succeeded');
    assert.equal(d.last()?.kind, 'reboot');
  });
});
