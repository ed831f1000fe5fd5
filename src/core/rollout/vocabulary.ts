// SPDX-License-Identifier: Apache-2.0
/**
 * The words of a rollout, defined once: the states of a rollout, the phases of a machine in it and
 * the planner's decisions. Everything else — protocol's schemas, the etcd codec, metrics, the
 * custom resources and the dashboard — takes its list (and its order) from here, so adding a word
 * is one change here plus the places the compiler then names (exhaustive switches and records).
 */

/**
 * The states of a rollout, in the order people read them (metrics and tables list them so).
 * `Halted` waits for a person; `Completed`, `RolledBack` (a fleet rollback, a person's or the
 * pool's own, reverses it: its `endReason` names the rollback), `Superseded` (a newer release's
 * rollout replaced a halted one) and `Cancelled` (a person ended it) are final: nothing is planned
 * for them again.
 */
export const RolloutStates = [
  'AwaitingApproval',
  'Active',
  'Paused',
  'Halted',
  'Completed',
  'RolledBack',
  'Superseded',
  'Cancelled',
] as const;
export type RolloutState = (typeof RolloutStates)[number];

/** Final states: the rollout is over (its `endReason` says why when it did not complete). */
export const EndedRolloutStates: readonly RolloutState[] = [
  'Completed',
  'RolledBack',
  'Superseded',
  'Cancelled',
];

/** Whether a rollout in `state` is over. */
export const isEnded = (state: RolloutState): boolean => EndedRolloutStates.includes(state);

/**
 * Where one machine of a rollout is. `Pending` machines are the planner's candidates. `Skipped`:
 * the machine was set aside without being changed (its drain timed out under
 * `quarantine-and-skip`: the node stays cordoned for a person to look at); finished, and not a
 * failure of the release, so it neither counts against the failure budget nor holds the rollout.
 */
export const MachinePhases = [
  'Pending',
  'InFlight',
  'Succeeded',
  'Failed',
  'RolledBack',
  'Skipped',
] as const;
export type MachinePhase = (typeof MachinePhases)[number];

/** What the planner decided for one machine of a rollout in one pass. */
export const DecisionActions = [
  'start',
  'wait',
  'in-flight',
  'soaking',
  'done',
  'failed',
  'skipped',
] as const;
export type DecisionAction = (typeof DecisionActions)[number];

/**
 * The kinds of the operator's history entries (store, API, dashboard, notifications).
 * `kube-plan`: a Kubernetes plan created, or its phase changed (docs/adr/0012); `kube-step`: one
 * of its steps started, done or failed.
 */
export const HistoryKinds = [
  'rollout-created',
  'rollout-state',
  'machine-start',
  'machine-stage',
  'machine-result',
  'machine-rollback',
  'decision',
  'warning',
  'kube-plan',
  'kube-step',
] as const;
export type HistoryKind = (typeof HistoryKinds)[number];

/** Whether `v` is a rollout state (for data read back from history or the wire). */
export const isRolloutState = (v: unknown): v is RolloutState =>
  (RolloutStates as readonly unknown[]).includes(v);

/** Whether `v` is a machine phase. */
export const isMachinePhase = (v: unknown): v is MachinePhase =>
  (MachinePhases as readonly unknown[]).includes(v);
