// SPDX-License-Identifier: Apache-2.0
import type { DrainOverride } from '../drain/pods.ts';

/** What the runner feeds the state machine (docs/adr/0004 §3). */
import type { SlotId } from '../slots/slot.ts';
import type { CommandType } from './commands.ts';
import type { Phase } from './phase.ts';

export type OperationKind = 'upgrade' | 'rollback' | 'reboot';

/**
 * What a request that says nothing of them means: the machine's data kept, the slot switched to at
 * once, no refusal overridden. The API's schema, the runner, the CLI and the operator read these.
 */
export const RequestDefaults = { preserve: true, stage: false, force: false } as const;

/** An API request, completed by the runner with the machine's facts. */
export interface OperationRequest {
  readonly id: string;
  readonly kind: OperationKind;
  /** Installer image reference (upgrade only). */
  readonly image?: string;
  readonly preserve: boolean;
  /** Write and verify the slot now; switch only when applied (a later reboot request). */
  readonly stage: boolean;
  /** Override the 2-member quorum refusal (admin only). */
  readonly force: boolean;
  /** Accept a 2-member etcd's loss of quorum only (the cluster's smallControlPlane policy). */
  readonly acceptQuorumLoss?: boolean;
  readonly controlPlane: boolean;
  /** How long the new slot has to become healthy after it boots, in ms. */
  readonly healthDeadlineMs: number;
  /** The rollout's drain policy, over the machine's own (upgrade only). */
  readonly drain?: DrainOverride;
}

/** Data some commands return; the machine copies it into the operation. */
export interface StepData {
  /** PullImage: what was pulled. */
  readonly pulled?: { readonly digest: string; readonly version: string };
  /** ExtendLeaseForReboot: the etcd lease id that now carries the lease key. */
  readonly leaseId?: string;
  /**
   * CheckQuorum: etcd loses its quorum with this member (a 1- or 2-member cluster whose downtime
   * was accepted), so nothing can be written to it from StoppingServices until the member is back.
   */
  readonly etcdDown?: boolean;
}

export interface CommandOutcome {
  readonly command: CommandType;
  readonly outcome: 'done' | 'skipped';
  /** Why a step was skipped (`not in a cluster`), shown in the event log. */
  readonly reason?: string;
  readonly data?: StepData;
}

export interface StepError {
  readonly code: string;
  readonly message: string;
  /** The step timed out and may still take effect (etcd writes without quorum). */
  readonly indeterminate?: boolean;
}

export type UpgradeEvent =
  | { readonly type: 'Requested'; readonly request: OperationRequest }
  /** Every command of the phase succeeded (or was skipped). */
  | {
      readonly type: 'StepDone';
      readonly phase: Phase;
      readonly outcomes: readonly CommandOutcome[];
    }
  /** A command of the phase failed; later commands of the phase were not run. */
  | {
      readonly type: 'StepFailed';
      readonly phase: Phase;
      readonly command: CommandType;
      readonly error: StepError;
    }
  /**
   * First event of every agent start: which boot this is and which slot it booted; `crash`, the
   * kernel log a boot since the last one left when it panicked (pstore), says why a trial failed.
   */
  | {
      readonly type: 'Booted';
      readonly bootId: string;
      readonly slot: SlotId;
      readonly crash?: string;
    }
  /** Periodic; lets the machine notice a passed deadline. */
  | { readonly type: 'Tick' }
  /** Someone (`by`) dropped the staged upgrade: the machine stays as it is, on its committed slot. */
  | { readonly type: 'Discarded'; readonly by: string };

export type UpgradeEventType = UpgradeEvent['type'];
