// SPDX-License-Identifier: Apache-2.0
/**
 * The undo stack (docs/adr/0004 §3): before a disruptive step is issued, its undo command is
 * pushed and persisted with the state, so a kill mid-step still undoes it. Aborting runs the stack
 * newest first.
 */
import type { UndoCommand } from './commands.ts';
import type { Phase } from './phase.ts';
import type { Operation } from './state.ts';

/** The undo command pushed on entering a disruptive phase. */
const UNDO_ON_ENTRY: Partial<Record<Phase, (op: Operation) => UndoCommand>> = {
  // Pushed before AcquireLease runs: an indeterminate acquisition is undone too (the release
  // deletes the key only if it holds our operation id).
  AcquiringLease: (op) => ({ type: 'ReleaseLease', operationId: op.id }),
  Cordoning: (op) => ({ type: 'Uncordon', operationId: op.id }),
  StoppingServices: () => ({ type: 'StartServices' }),
  // A removed member's data dir can never start again: any way back is as a new member.
  LeavingEtcd: () => ({ type: 'RejoinEtcd', asNewMember: true }),
  ReleasingMounts: () => ({ type: 'MountEphemeral' }),
  ArmingBootOnce: () => ({ type: 'DisarmBootOnce' }),
};

function has(undo: readonly UndoCommand[], type: UndoCommand['type']): boolean {
  return undo.some((step) => step.type === type);
}

/** `undo` with the step of `phase` pushed (once), if the phase is disruptive. */
export function pushUndo(
  undo: readonly UndoCommand[],
  phase: Phase,
  op: Operation,
): readonly UndoCommand[] {
  const step = UNDO_ON_ENTRY[phase]?.(op);
  if (step === undefined || has(undo, step.type)) return undo;
  return [...undo, step];
}

/** `undo` without the steps of `type` (a forward phase just did them). */
export function dropUndo(
  undo: readonly UndoCommand[],
  type: UndoCommand['type'],
): readonly UndoCommand[] {
  return undo.filter((step) => step.type !== type);
}

/**
 * What is still to undo after a reboot that leaves the operation running on a new boot: only the
 * cluster-level steps. Services and mounts are down after any reboot, and the boot-once was
 * consumed; the post-boot phases bring those back themselves.
 */
export function keepAcrossReboot(undo: readonly UndoCommand[]): readonly UndoCommand[] {
  return undo.filter((step) => step.type === 'ReleaseLease' || step.type === 'Uncordon');
}

/**
 * The undo stack of an abort that is resumed on a new boot: after a reboot nothing runs, so
 * services, mounts and (control plane) the etcd member come back whatever had been stopped;
 * the cluster-level steps and the disarm are kept if they were taken.
 */
export function restoreAfterReboot(
  undo: readonly UndoCommand[],
  op: Operation,
): readonly UndoCommand[] {
  const asNewMember = undo.some((step) => step.type === 'RejoinEtcd' && step.asNewMember);
  return [
    ...undo.filter((step) => step.type === 'ReleaseLease' || step.type === 'Uncordon'),
    { type: 'StartServices' },
    ...(op.controlPlane ? [{ type: 'RejoinEtcd', asNewMember } as const] : []),
    { type: 'MountEphemeral' },
    ...(has(undo, 'DisarmBootOnce') ? [{ type: 'DisarmBootOnce' } as const] : []),
  ];
}

/** Whether the cluster lease may be held (taken, or its acquisition maybe took effect). */
export function holdsLease(undo: readonly UndoCommand[]): boolean {
  return has(undo, 'ReleaseLease');
}

/** Whether a boot-once may be armed for the target. */
export function mayBeArmed(undo: readonly UndoCommand[]): boolean {
  return has(undo, 'DisarmBootOnce');
}
