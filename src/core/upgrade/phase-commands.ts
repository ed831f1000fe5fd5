// SPDX-License-Identifier: Apache-2.0
/**
 * The commands a phase issues, as a pure function of the persisted state: entering a phase and
 * checking a reported failure both use it, so what was issued can always be recomputed.
 */
import type { Command } from './commands.ts';
import type { Phase } from './phase.ts';
import type { Operation, Transition, UpgradeState } from './state.ts';
import { pushUndo } from './undo.ts';

/** A state with an operation (every phase but `Idle`). */
export type ActiveState = UpgradeState & { readonly op: Operation };

function badReason(op: Operation): string {
  return op.failure === undefined ? 'rolled back' : `${op.failure.code}: ${op.failure.message}`;
}

/** Services, mounts and the etcd member after the target booted. */
function rejoin(op: Operation): Command[] {
  return [
    ...(op.preserve ? [] : [{ type: 'WipeEphemeral', operationId: op.id } as const]),
    { type: 'MountEphemeral' },
    { type: 'StartServices' },
    ...(op.controlPlane ? [{ type: 'RejoinEtcd', asNewMember: !op.preserve } as const] : []),
  ];
}

/** Back on the previous slot: mark the target bad, bring the node back, let the cluster go. */
function recover(op: Operation): Command[] {
  return [
    { type: 'MarkSlotBad', slot: op.target, reason: badReason(op) },
    { type: 'MountEphemeral' },
    { type: 'StartServices' },
    ...(op.controlPlane ? [{ type: 'RejoinEtcd', asNewMember: !op.preserve } as const] : []),
    { type: 'Uncordon', operationId: op.id },
    ...(op.controlPlane ? [{ type: 'ReleaseLease', operationId: op.id } as const] : []),
  ];
}

/**
 * An upgrade's slot becomes `ready` only once its boot entry is written (a slot `ready` without an
 * entry would pass as a rollback target); the entry point (boot-once) is written last. A rollback
 * arms the entry CheckingRollbackTarget found valid.
 */
function arm(op: Operation): Command[] {
  const slot = op.target;
  return op.kind === 'upgrade'
    ? [
        { type: 'WriteBootEntry', slot, operationId: op.id },
        { type: 'MarkSlotReady', slot, operationId: op.id },
        { type: 'ArmBootOnce', slot },
      ]
    : [{ type: 'ArmBootOnce', slot }];
}

const extendLease = (op: Operation): Command => ({
  type: 'ExtendLeaseForReboot',
  operationId: op.id,
});

const COMMANDS: Readonly<Record<Phase, (op: Operation, state: ActiveState) => Command[]>> = {
  Idle: () => [],
  // Every check of the image, before the first disruptive phase and long before WritingSlot.
  Pulling: (op) =>
    op.image === undefined
      ? []
      : [
          { type: 'PullImage', image: op.image, slot: op.target, force: op.force },
          { type: 'CheckStagedImage', slot: op.target },
        ],
  CheckingRollbackTarget: (op) => [{ type: 'VerifyRollbackTarget', slot: op.target }],
  AcquiringLease: (op) => [{ type: 'AcquireLease', operationId: op.id }],
  // The quorum check's `force` is only the 2-member override: the policy's acceptance grants it.
  CheckingQuorum: (op) => [
    { type: 'CheckQuorum', preserve: op.preserve, force: op.force || op.acceptQuorumLoss === true },
  ],
  Cordoning: (op) => [{ type: 'Cordon', operationId: op.id }],
  Draining: (op) => [
    { type: 'Drain', operationId: op.id, ...(op.drain !== undefined && { policy: op.drain }) },
  ],
  // When etcd goes down with this member, its lease is extended for the reboot while it can be.
  StoppingServices: (op) => [
    ...(op.controlPlane && op.etcdDown === true ? [extendLease(op)] : []),
    { type: 'StopServices' },
  ],
  LeavingEtcd: () => [{ type: 'LeaveEtcd' }],
  ReleasingMounts: () => [{ type: 'ReleaseMounts' }],
  // Unbootable before the first byte: a half-written slot is never selectable.
  WritingSlot: (op) => [
    { type: 'MarkSlotUnbootable', slot: op.target },
    { type: 'WriteSlot', slot: op.target, operationId: op.id },
  ],
  VerifyingSlot: (op) => [{ type: 'VerifySlot', slot: op.target, operationId: op.id }],
  ArmingBootOnce: arm,
  Staged: () => [],
  Rebooting: (op) => [
    ...(op.controlPlane && op.etcdDown !== true ? [extendLease(op)] : []),
    { type: 'Reboot' },
  ],
  Rejoining: rejoin,
  // `deadline` is set on entering Rejoining; a missing one fails at once rather than never.
  HealthChecking: (op) => [
    { type: 'RunHealthChecks', slot: op.target, deadline: op.deadline ?? 0 },
  ],
  Committing: (op) => [{ type: 'Commit', slot: op.target }],
  Uncordoning: (op) => [{ type: 'Uncordon', operationId: op.id }],
  ReleasingLease: (op) => [{ type: 'ReleaseLease', operationId: op.id }],
  Aborting: (_op, state) => [...state.undo].reverse(),
  RollingBack: (op) => [
    { type: 'MarkSlotBad', slot: op.target, reason: badReason(op) },
    { type: 'Reboot' },
  ],
  Recovering: recover,
};

/** The commands `state.phase` issues on entry (and that a restart in the same boot runs again). */
export function phaseCommands(state: ActiveState): readonly Command[] {
  return COMMANDS[state.phase](state.op, state);
}

/** Enter `phase`: push its undo step (before its command can run), then issue its commands. */
export function enter(state: ActiveState, phase: Phase): Transition {
  const op =
    phase === 'Rebooting' && state.bootId !== undefined
      ? { ...state.op, bootIdAtReboot: state.bootId }
      : state.op;
  const next: ActiveState = { ...state, phase, op, undo: pushUndo(state.undo, phase, op) };
  return { state: next, commands: phaseCommands(next) };
}
