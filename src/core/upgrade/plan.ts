// SPDX-License-Identifier: Apache-2.0
/**
 * The forward order of phases for one operation ("Upgrade sequence"), as two lists: up
 * to the reboot, and after the target booted. `nextPhase` walks them; everything off the forward
 * path (abort, rollback, recovery) lives in failure.ts and boot.ts.
 */
import { Phase } from './phase.ts';
import type { Operation } from './state.ts';

/** Phases that take the node out of service, in order; skipped by the first pass of a staged upgrade. */
function disruption(op: Operation): Phase[] {
  return [
    ...(op.controlPlane ? [Phase.AcquiringLease, Phase.CheckingQuorum] : []),
    Phase.Cordoning,
    Phase.Draining,
    Phase.StoppingServices,
    // A member that leaves must be healthy-checked first (CheckingQuorum) and rejoins as new.
    ...(op.controlPlane && !op.preserve ? [Phase.LeavingEtcd] : []),
    Phase.ReleasingMounts,
  ];
}

/**
 * Phases that check the request, then prepare the slot (never for `reboot`). A staged upgrade
 * writes and verifies the slot but does not arm it, so a reboot nobody planned boots the
 * committed slot; applying it later verifies the slot again before anything is disrupted.
 */
function preparation(op: Operation): { readonly check: Phase[]; readonly slot: Phase[] } {
  if (op.fromStaged === true) return { check: [Phase.VerifyingSlot], slot: [Phase.ArmingBootOnce] };
  switch (op.kind) {
    case 'upgrade':
      return {
        check: [Phase.Pulling],
        slot: op.stage
          ? [Phase.WritingSlot, Phase.VerifyingSlot]
          : [Phase.WritingSlot, Phase.VerifyingSlot, Phase.ArmingBootOnce],
      };
    case 'rollback':
      return { check: [Phase.CheckingRollbackTarget], slot: [Phase.ArmingBootOnce] };
    case 'reboot':
      return { check: [], slot: [] };
  }
}

/** Every phase from the request to the reboot (or to `Staged`), in order. */
export function preRebootPlan(op: Operation): readonly Phase[] {
  const { check, slot } = preparation(op);
  return [
    ...check,
    ...(op.stage ? [] : disruption(op)),
    ...slot,
    op.stage ? Phase.Staged : Phase.Rebooting,
  ];
}

/** Every phase after the target booted, ending with `Idle` (success). */
export function postBootPlan(op: Operation): readonly Phase[] {
  return [
    Phase.Rejoining,
    Phase.HealthChecking,
    // A plain reboot boots the committed slot again: nothing to commit.
    ...(op.kind === 'reboot' ? [] : [Phase.Committing]),
    Phase.Uncordoning,
    ...(op.controlPlane ? [Phase.ReleasingLease] : []),
    Phase.Idle,
  ];
}

/** The phase after `phase` on the operation's forward path, if `phase` is on it. */
export function nextPhase(op: Operation, phase: Phase): Phase | undefined {
  for (const plan of [preRebootPlan(op), postBootPlan(op)]) {
    const index = plan.indexOf(phase);
    if (index >= 0) return plan[index + 1];
  }
  return undefined;
}

/** Phases before the point of no return (the reboot), where a failure aborts and undoes. */
export const PreRebootPhases = [
  Phase.AcquiringLease,
  Phase.CheckingQuorum,
  Phase.Cordoning,
  Phase.Draining,
  Phase.StoppingServices,
  Phase.LeavingEtcd,
  Phase.ReleasingMounts,
  Phase.WritingSlot,
  Phase.VerifyingSlot,
  Phase.ArmingBootOnce,
] as const satisfies readonly Phase[];
export type PreRebootPhase = (typeof PreRebootPhases)[number];

/** Phases after the target booted and before it is committed. */
export const TrialPhases: readonly Phase[] = [
  Phase.Rejoining,
  Phase.HealthChecking,
  Phase.Committing,
];
