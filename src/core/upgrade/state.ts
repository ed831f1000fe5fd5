// SPDX-License-Identifier: Apache-2.0
/** The persisted state of the upgrade state machine (the journal's `current.json`). */
import type { DrainOverride } from '../drain/pods.ts';
import type { SlotId } from '../slots/slot.ts';
import type { Command, UndoCommand } from './commands.ts';
import type { OperationKind } from './events.ts';
import type { Phase } from './phase.ts';

export interface Operation {
  readonly id: string;
  readonly kind: OperationKind;
  readonly image?: string;
  readonly preserve: boolean;
  readonly stage: boolean;
  readonly force: boolean;
  /** Take the etcd member down although a 2-member cluster loses quorum (not `force`'s rest). */
  readonly acceptQuorumLoss?: boolean;
  readonly controlPlane: boolean;
  readonly healthDeadlineMs: number;
  /** The rollout's drain policy, over the machine's own. */
  readonly drain?: DrainOverride;
  /** The slot the operation boots (the inactive slot for upgrade/rollback, the booted one for reboot). */
  readonly target: SlotId;
  /** The slot booted when the operation started. */
  readonly previous: SlotId;
  /** Epoch ms. */
  readonly startedAt: number;
  /** What PullImage fetched. */
  readonly pulled?: { readonly digest: string; readonly version: string };
  /** The boot id recorded just before asking for the reboot. */
  readonly bootIdAtReboot?: string;
  /** Epoch ms by which the target must be healthy. */
  readonly deadline?: number;
  readonly rollbackAttempts?: number;
  /** Why the operation is aborting / rolling back / recovering. */
  readonly failure?: { readonly code: string; readonly message: string };
  readonly leaseId?: string;
  /** etcd goes down with this member (CheckQuorum said so): the lease is extended before it does. */
  readonly etcdDown?: boolean;
  /** A staged operation being applied: its slot is written, verified again, then armed. */
  readonly fromStaged?: boolean;
  /** Why the operation is rolling back / recovering; becomes `last.reason` when it ends RolledBack. */
  readonly rollbackReason?: RollbackReason;
}

/** Why an operation ended on its previous slot (`manual` = a requested rollback that succeeded). */
export type RollbackReason = 'BootFailed' | 'HealthDeadline' | 'RebootedBeforeCommit' | 'manual';

export type OperationResult = 'Succeeded' | 'Failed' | 'RolledBack';

export interface LastResult {
  readonly operationId: string;
  readonly kind: OperationKind;
  readonly result: OperationResult;
  readonly code?: string;
  readonly reason?: string;
  /**
   * What went wrong, as the failing step said it (`not healthy by the deadline: node w-1 is not
   * Ready`), when `reason` is only a word: a rolled-back machine's why, wherever its code is shown.
   */
  readonly message?: string;
  /** Epoch ms. */
  readonly finishedAt: number;
}

export interface UpgradeState {
  readonly phase: Phase;
  readonly op?: Operation;
  /** Undo commands for the disruptive steps taken so far, oldest first; run newest first. */
  readonly undo: readonly UndoCommand[];
  readonly last?: LastResult;
  /** The boot this state was last fed (`Booted`); a different id means the machine rebooted. */
  readonly bootId?: string;
  readonly bootedSlot?: SlotId;
}

export interface Transition {
  readonly state: UpgradeState;
  readonly commands: readonly Command[];
}

export const initialState: UpgradeState = { phase: 'Idle', undo: [] };
