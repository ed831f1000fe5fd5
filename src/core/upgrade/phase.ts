// SPDX-License-Identifier: Apache-2.0
/**
 * The phases of the node agent's upgrade state machine (docs/adr/0004 §3). Names are a wire
 * contract (status, events, journal): add phases, never rename them.
 */
export const Phase = {
  Idle: 'Idle',
  Pulling: 'Pulling',
  CheckingRollbackTarget: 'CheckingRollbackTarget',
  AcquiringLease: 'AcquiringLease',
  CheckingQuorum: 'CheckingQuorum',
  Cordoning: 'Cordoning',
  Draining: 'Draining',
  StoppingServices: 'StoppingServices',
  LeavingEtcd: 'LeavingEtcd',
  ReleasingMounts: 'ReleasingMounts',
  WritingSlot: 'WritingSlot',
  VerifyingSlot: 'VerifyingSlot',
  ArmingBootOnce: 'ArmingBootOnce',
  Staged: 'Staged',
  Rebooting: 'Rebooting',
  Rejoining: 'Rejoining',
  HealthChecking: 'HealthChecking',
  Committing: 'Committing',
  Uncordoning: 'Uncordoning',
  ReleasingLease: 'ReleasingLease',
  Aborting: 'Aborting',
  RollingBack: 'RollingBack',
  Recovering: 'Recovering',
} as const;
export type Phase = (typeof Phase)[keyof typeof Phase];
export const Phases: readonly Phase[] = Object.values(Phase);

/**
 * Phases in which the machine waits for an outside event (a request, a boot) rather than for the
 * result of its own commands. Commands issued on entering them are best-effort clean-ups.
 */
export const QuiescentPhases: readonly Phase[] = [Phase.Idle, Phase.Staged];
