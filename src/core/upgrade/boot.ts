// SPDX-License-Identifier: Apache-2.0
/**
 * `Booted`, the first event of every agent start. The same boot id is an agent restart: nothing
 * changes (the runner runs the record's commands again). A new boot id means the machine
 * rebooted, and which slot came up decides: the target → the trial continues (Rejoining); the
 * other slot → the target failed or was never reached (Recovering, or Aborting before the reboot).
 */
import { ErrorCode } from '../errors.ts';
import type { SlotId } from '../slots/slot.ts';
import type { Command } from './commands.ts';
import { crashFailure } from './crash.ts';
import { discardPull, finish } from './finish.ts';
import type { Phase } from './phase.ts';
import { enter, type ActiveState } from './phase-commands.ts';
import { PreRebootPhases, type PreRebootPhase } from './plan.ts';
import type { RollbackReason, Transition, UpgradeState } from './state.ts';
import { holdsLease, keepAcrossReboot, mayBeArmed, restoreAfterReboot } from './undo.ts';

/**
 * What a plain boot that ends up `Idle` runs, best-effort: nothing else brings the EPHEMERAL
 * mount and the services (etcd on a control-plane machine, as the same member) back.
 */
const BootUp: readonly Command[] = [{ type: 'MountEphemeral' }, { type: 'StartServices' }];

/** Rollback attempts (mark bad + reboot) before giving up with `MOLT_NO_VALID_SLOT`. */
export const MaxRollbackAttempts = 3;

const interrupted = (phase: Phase): { code: string; message: string } => ({
  code: ErrorCode.Interrupted,
  message: `the machine rebooted during ${phase}`,
});

/** The trial slot is running: bring services back and check its health by `deadline`. */
function rejoin(state: ActiveState, deadline: number): Transition {
  const op = { ...state.op, deadline };
  return enter({ ...state, op, undo: keepAcrossReboot(state.undo) }, 'Rejoining');
}

const REASONS: Record<Exclude<RollbackReason, 'manual'>, (s: ActiveState) => string> = {
  BootFailed: (s) =>
    `slot ${s.op.target} did not boot; the bootloader fell back to slot ${s.bootedSlot ?? s.op.previous}`,
  RebootedBeforeCommit: (s) => `the machine rebooted before slot ${s.op.target} was committed`,
  HealthDeadline: (s) => `slot ${s.op.target} was not healthy before its deadline`,
};

/**
 * Back on the previous slot: record why (a boot that failed with the kernel's words when its panic
 * left them: `crash`), mark the target bad, bring the node back.
 */
function recover(
  state: ActiveState,
  reason: Exclude<RollbackReason, 'manual'>,
  crash?: string,
): Transition {
  const code =
    reason === 'BootFailed'
      ? ErrorCode.BootFailed
      : reason === 'HealthDeadline'
        ? ErrorCode.HealthDeadline
        : ErrorCode.Interrupted;
  const crashed =
    reason === 'BootFailed'
      ? crashFailure(crash, state.op.target, state.bootedSlot ?? state.op.previous)
      : undefined;
  const failure = state.op.failure ?? crashed ?? { code, message: REASONS[reason](state) };
  const op = { ...state.op, failure, rollbackReason: state.op.rollbackReason ?? reason };
  return enter({ ...state, op, undo: keepAcrossReboot(state.undo) }, 'Recovering');
}

/** The target booted again although it should not have: mark it bad and reboot, a bounded number of times. */
function rollBackAgain(state: ActiveState, now: number): Transition {
  const attempts = state.op.rollbackAttempts ?? 0;
  if (attempts >= MaxRollbackAttempts) {
    const reason = `slot ${state.op.target} still boots after ${attempts} attempts to roll back; the node is left cordoned`;
    const release = holdsLease(state.undo)
      ? [{ type: 'ReleaseLease', operationId: state.op.id } as const]
      : [];
    return finish(state, now, { result: 'Failed', code: ErrorCode.NoValidSlot, reason }, release);
  }
  const op = {
    ...state.op,
    failure: state.op.failure ?? interrupted(state.phase),
    rollbackReason: state.op.rollbackReason ?? 'RebootedBeforeCommit',
    rollbackAttempts: attempts + 1,
  };
  return enter({ ...state, op, undo: keepAcrossReboot(state.undo) }, 'RollingBack');
}

/** Before the reboot: the node is restored on whatever booted, and the operation fails. */
function abortAfterReboot(state: ActiveState): Transition {
  const op = { ...state.op, failure: state.op.failure ?? interrupted(state.phase) };
  return enter({ ...state, op, undo: restoreAfterReboot(state.undo, op) }, 'Aborting');
}

/** `crash`: the kernel log a panicking boot since the last one left (events.ts `Booted`). */
type OnNewBoot = (state: ActiveState, booted: SlotId, now: number, crash?: string) => Transition;

/** `booted` is the operation's trial slot (never true for a plain reboot). */
const isTrial = (s: ActiveState, booted: SlotId): boolean =>
  s.op.target !== s.op.previous && booted === s.op.target;
const fresh = (s: ActiveState, now: number): number => now + s.op.healthDeadlineMs;

const preReboot: OnNewBoot = (s, booted, now) =>
  isTrial(s, booted) && mayBeArmed(s.undo) ? rejoin(s, fresh(s, now)) : abortAfterReboot(s);
const untouched: OnNewBoot = (s, _b, now) => {
  const failure = interrupted(s.phase);
  return finish(s, now, { result: 'Failed', code: failure.code, reason: failure.message }, [
    ...discardPull(s),
    ...BootUp,
  ]);
};
/** Pre-commit: a second boot of the trial keeps the first deadline (the trial stays bounded). */
const trial: OnNewBoot = (s, booted) =>
  booted === s.op.target ? rejoin(s, s.op.deadline ?? 0) : recover(s, 'RebootedBeforeCommit');
/** Commit reported or maybe written: the target booting again means it is committed. */
const committed: OnNewBoot = (s, booted, now, crash) =>
  booted === s.op.target
    ? rejoin(s, fresh(s, now))
    : recover(s, s.phase === 'Committing' ? 'RebootedBeforeCommit' : 'BootFailed', crash);

const ON_NEW_BOOT: Record<Exclude<Phase, 'Idle'>, OnNewBoot> = {
  Pulling: untouched,
  CheckingRollbackTarget: untouched,
  ...(Object.fromEntries(PreRebootPhases.map((phase) => [phase, preReboot])) as Record<
    PreRebootPhase,
    OnNewBoot
  >),
  // The staged slot is not armed: any reboot brings the committed slot back, and the staged one
  // waits to be applied. (A journal from before staging was locked may have it armed: then the
  // target booting is a trial like any other.)
  Staged: (s, booted, now) =>
    isTrial(s, booted) ? rejoin(s, fresh(s, now)) : { state: s, commands: BootUp },
  Rebooting: (s, booted, now, crash) =>
    booted === s.op.target ? rejoin(s, fresh(s, now)) : recover(s, 'BootFailed', crash),
  Rejoining: trial,
  HealthChecking: trial,
  Committing: committed,
  Uncordoning: committed,
  ReleasingLease: committed,
  // The abort was cut by a reboot: finish it on the previous slot; on the trial slot, roll back first.
  Aborting: (s, booted, now) =>
    isTrial(s, booted) && mayBeArmed(s.undo) ? rollBackAgain(s, now) : abortAfterReboot(s),
  RollingBack: (s, booted, now) =>
    booted === s.op.target ? rollBackAgain(s, now) : recover(s, 'HealthDeadline'),
  Recovering: (s, booted, now, crash) => {
    if (booted !== s.op.target) return recover(s, 'BootFailed', crash);
    return s.op.kind === 'reboot' ? rejoin(s, fresh(s, now)) : rollBackAgain(s, now);
  },
};

export function onBooted(
  state: UpgradeState,
  event: { readonly bootId: string; readonly slot: SlotId; readonly crash?: string },
  now: number,
): Transition {
  const { bootId, slot } = event;
  if (state.bootId === bootId) return { state, commands: [] };
  const rebooted: UpgradeState = { ...state, bootId, bootedSlot: slot };
  if (rebooted.phase === 'Idle' || rebooted.op === undefined)
    return { state: rebooted, commands: BootUp };
  return ON_NEW_BOOT[rebooted.phase]({ ...rebooted, op: rebooted.op }, slot, now, event.crash);
}
