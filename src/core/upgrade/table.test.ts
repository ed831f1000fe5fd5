// SPDX-License-Identifier: Apache-2.0
// Every Phase × event kind, for a control-plane upgrade A → B with preserve: false (the path
// with the most steps): legal or illegal as the table in transition.ts says, and for each legal
// pair the target phase and the commands, in order. '✗' = illegal; '-' = no commands.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Phase, Phases } from './phase.ts';
import type { UpgradeEvent } from './events.ts';
import type { UpgradeState } from './state.ts';
import { isIllegal, phaseCommands, transition } from './transition.ts';
import { CP, request, stateIn, types } from './harness.test.ts';

const EVENT_KEYS = [
  'reqU',
  'reqR',
  'done',
  'doneOther',
  'fail',
  'bootSame',
  'bootT',
  'bootP',
  'tick',
  'late',
  'discard',
] as const;
type EventKey = (typeof EVENT_KEYS)[number];

function eventFor(key: EventKey, state: UpgradeState): { event: UpgradeEvent; now: number } {
  const deadline = state.op?.deadline ?? 0;
  const other = state.phase === Phase.Draining ? Phase.Cordoning : Phase.Draining;
  const issued = state.op === undefined ? [] : phaseCommands({ ...state, op: state.op });
  const events: Record<EventKey, UpgradeEvent> = {
    reqU: { type: 'Requested', request: request('upgrade', { ...CP, id: 'op-2' }) },
    reqR: { type: 'Requested', request: request('reboot', { ...CP, id: 'op-3' }) },
    done: { type: 'StepDone', phase: state.phase, outcomes: [] },
    doneOther: { type: 'StepDone', phase: other, outcomes: [] },
    fail: {
      type: 'StepFailed',
      phase: state.phase,
      command: issued[0]?.type ?? 'Reboot',
      error: { code: 'MOLT_TEST', message: 'broke' },
    },
    bootSame: { type: 'Booted', bootId: state.bootId ?? 'none', slot: state.bootedSlot ?? 'A' },
    bootT: { type: 'Booted', bootId: 'boot-new', slot: 'B' },
    bootP: { type: 'Booted', bootId: 'boot-new', slot: 'A' },
    tick: { type: 'Tick' },
    late: { type: 'Tick' },
    discard: { type: 'Discarded', by: 'admin' },
  };
  return { event: events[key], now: key === 'late' ? Math.max(deadline, 1) + 5 : 0 };
}

const ABORT_ALL = 'Aborting: MountEphemeral,RejoinEtcd,StartServices,Uncordon,ReleaseLease';
const ABORT_ARMED =
  'Aborting: DisarmBootOnce,MountEphemeral,RejoinEtcd,StartServices,Uncordon,ReleaseLease';
const REJOIN = 'Rejoining: WipeEphemeral,MountEphemeral,StartServices,RejoinEtcd';
const RECOVER =
  'Recovering: MarkSlotBad,MountEphemeral,StartServices,RejoinEtcd,Uncordon,ReleaseLease';
const ROLLBACK = 'RollingBack: MarkSlotBad,Reboot';
const BOOT_UP = 'MountEphemeral,StartServices';

/** Cells not listed: reqU/reqR/done/doneOther/fail/discard '✗', bootSame/tick/late '<same phase>: -'. */
const TABLE: Record<Phase, Partial<Record<EventKey, string>>> = {
  Idle: {
    reqU: 'Pulling: PullImage,CheckStagedImage',
    reqR: 'AcquiringLease: AcquireLease',
    bootT: `Idle: ${BOOT_UP}`,
    bootP: `Idle: ${BOOT_UP}`,
  },
  Pulling: {
    done: 'AcquiringLease: AcquireLease',
    fail: 'Idle: DiscardPull',
    bootT: `Idle: DiscardPull,${BOOT_UP}`,
    bootP: `Idle: DiscardPull,${BOOT_UP}`,
  },
  CheckingRollbackTarget: {
    done: 'AcquiringLease: AcquireLease',
    fail: 'Idle: -',
    bootT: `Idle: ${BOOT_UP}`,
    bootP: `Idle: ${BOOT_UP}`,
  },
  AcquiringLease: {
    done: 'CheckingQuorum: CheckQuorum',
    fail: 'Aborting: ReleaseLease',
    bootT: 'Aborting: MountEphemeral,RejoinEtcd,StartServices,ReleaseLease',
    bootP: 'Aborting: MountEphemeral,RejoinEtcd,StartServices,ReleaseLease',
  },
  CheckingQuorum: {
    done: 'Cordoning: Cordon',
    fail: 'Aborting: ReleaseLease',
    bootT: 'Aborting: MountEphemeral,RejoinEtcd,StartServices,ReleaseLease',
    bootP: 'Aborting: MountEphemeral,RejoinEtcd,StartServices,ReleaseLease',
  },
  Cordoning: {
    done: 'Draining: Drain',
    fail: 'Aborting: Uncordon,ReleaseLease',
    bootT: ABORT_ALL,
    bootP: ABORT_ALL,
  },
  Draining: {
    done: 'StoppingServices: StopServices',
    fail: 'Aborting: Uncordon,ReleaseLease',
    bootT: ABORT_ALL,
    bootP: ABORT_ALL,
  },
  StoppingServices: {
    done: 'LeavingEtcd: LeaveEtcd',
    fail: 'Aborting: StartServices,Uncordon,ReleaseLease',
    bootT: ABORT_ALL,
    bootP: ABORT_ALL,
  },
  LeavingEtcd: {
    done: 'ReleasingMounts: ReleaseMounts',
    fail: 'Aborting: RejoinEtcd,StartServices,Uncordon,ReleaseLease',
    bootT: ABORT_ALL,
    bootP: ABORT_ALL,
  },
  ReleasingMounts: {
    done: 'WritingSlot: MarkSlotUnbootable,WriteSlot',
    fail: ABORT_ALL,
    bootT: ABORT_ALL,
    bootP: ABORT_ALL,
  },
  WritingSlot: {
    done: 'VerifyingSlot: VerifySlot',
    fail: ABORT_ALL,
    bootT: ABORT_ALL,
    bootP: ABORT_ALL,
  },
  VerifyingSlot: {
    done: 'ArmingBootOnce: WriteBootEntry,MarkSlotReady,ArmBootOnce',
    fail: ABORT_ALL,
    bootT: ABORT_ALL,
    bootP: ABORT_ALL,
  },
  ArmingBootOnce: {
    done: 'Rebooting: ExtendLeaseForReboot,Reboot',
    fail: ABORT_ARMED,
    bootT: REJOIN,
    bootP: ABORT_ARMED,
  },
  // Nothing is armed while staged: a reboot that was not asked for boots the committed slot and
  // keeps the staged one; the reboot request verifies it again before anything is disrupted.
  Staged: {
    reqR: 'VerifyingSlot: VerifySlot',
    bootT: REJOIN,
    bootP: `Staged: ${BOOT_UP}`,
    discard: 'Idle: DiscardPull',
  },
  Rebooting: { fail: ABORT_ARMED, bootT: REJOIN, bootP: RECOVER },
  Rejoining: {
    done: 'HealthChecking: RunHealthChecks',
    fail: ROLLBACK,
    bootT: REJOIN,
    bootP: RECOVER,
    late: ROLLBACK,
  },
  HealthChecking: {
    done: 'Committing: Commit',
    fail: ROLLBACK,
    bootT: REJOIN,
    bootP: RECOVER,
    late: ROLLBACK,
  },
  Committing: { done: 'Uncordoning: Uncordon', fail: ROLLBACK, bootT: REJOIN, bootP: RECOVER },
  Uncordoning: {
    done: 'ReleasingLease: ReleaseLease',
    fail: 'Idle: ReleaseLease',
    bootT: REJOIN,
    bootP: RECOVER,
  },
  ReleasingLease: { done: 'Idle: -', fail: 'Idle: -', bootT: REJOIN, bootP: RECOVER },
  Aborting: {
    done: 'Idle: DiscardPull',
    fail: 'Idle: RejoinEtcd,StartServices,Uncordon,ReleaseLease,DiscardPull',
    bootT: ABORT_ALL,
    bootP: ABORT_ALL,
  },
  RollingBack: { fail: 'RollingBack: Reboot', bootT: ROLLBACK, bootP: RECOVER },
  Recovering: {
    done: 'Idle: -',
    fail: 'Idle: MountEphemeral,StartServices,RejoinEtcd,Uncordon,ReleaseLease',
    bootT: ROLLBACK,
    bootP: RECOVER,
  },
};

function expected(phase: Phase, key: EventKey): string {
  const cell = TABLE[phase][key];
  if (cell !== undefined) return cell;
  return ['bootSame', 'tick', 'late'].includes(key) ? `${phase}: -` : '✗';
}

describe('the transition table, Phase × event kind', () => {
  it('covers every phase', () => {
    assert.deepEqual(Object.keys(TABLE).sort(), [...Phases].sort());
  });

  for (const phase of Phases) {
    it(`${phase}: every event kind is legal or illegal as the table says`, () => {
      const state = stateIn(phase);
      assert.equal(state.phase, phase);
      for (const key of EVENT_KEYS) {
        const { event, now } = eventFor(key, state);
        const result = transition(state, event, now);
        const actual = isIllegal(result)
          ? '✗'
          : `${result.state.phase}: ${result.commands.length === 0 ? '-' : types(result.commands).join(',')}`;
        assert.equal(actual, expected(phase, key), `${phase} × ${key}`);
        if (key === 'bootSame' && !isIllegal(result))
          assert.deepEqual(result.state, state, 'same boot changes nothing');
        if (isIllegal(result)) assert.ok(result.reason.length > 0);
      }
    });
  }
});
