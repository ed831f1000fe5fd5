// SPDX-License-Identifier: Apache-2.0
/**
 * What the state machine asks the runner to do. Every command is idempotent: after a crash the
 * runner executes the persisted command list again from the start (docs/adr/0004 §3).
 */
import type { DrainOverride } from '../drain/pods.ts';
import type { SlotId } from '../slots/slot.ts';

export type Command =
  /**
   * Pull the image into the target's staging area (`*.next`), verifying digests, contract and
   * signature. A slot store that keeps the rootfs in place (a partition) gets it written there:
   * the executor then makes the slot unbootable during the pull, once the image passed every check
   * that needs no bytes and before the first byte (docs/adr/0008 §3); MarkSlotUnbootable at
   * WritingSlot finds that done.
   */
  | {
      readonly type: 'PullImage';
      readonly image: string;
      readonly slot: SlotId;
      /** Also when the booted slot already runs this image (which gives up the fallback). */
      readonly force: boolean;
    }
  /**
   * Check every artifact of the staged pull and render the boot entry the slot will get (both
   * back-ends), before anything is disrupted or written: after it, nothing about the image can
   * refuse it.
   */
  | { readonly type: 'CheckStagedImage'; readonly slot: SlotId }
  /**
   * Manual rollback, before any disruption: the other slot is `ready`, its artifacts re-hash to
   * its manifest, and its boot entry is there and boots what the manifest says.
   */
  | { readonly type: 'VerifyRollbackTarget'; readonly slot: SlotId }
  | { readonly type: 'AcquireLease'; readonly operationId: string }
  | { readonly type: 'CheckQuorum'; readonly preserve: boolean; readonly force: boolean }
  | { readonly type: 'Cordon'; readonly operationId: string }
  | { readonly type: 'Drain'; readonly operationId: string; readonly policy?: DrainOverride }
  | { readonly type: 'StopServices' }
  | { readonly type: 'LeaveEtcd' }
  | { readonly type: 'ReleaseMounts' }
  /** Remove the slot's boot entry and mark its manifest `writing`, before any byte is written. */
  | { readonly type: 'MarkSlotUnbootable'; readonly slot: SlotId }
  /** Move the staged artifacts into the slot and write its manifest, still `writing`. */
  | { readonly type: 'WriteSlot'; readonly slot: SlotId; readonly operationId: string }
  /** Read the slot this operation wrote back and compare with the image digests. */
  | { readonly type: 'VerifySlot'; readonly slot: SlotId; readonly operationId: string }
  /** Write the boot entry of the slot this operation wrote and verified (not armed). */
  | { readonly type: 'WriteBootEntry'; readonly slot: SlotId; readonly operationId: string }
  /** The slot and its boot entry are written: its manifest becomes `ready`, last. */
  | { readonly type: 'MarkSlotReady'; readonly slot: SlotId; readonly operationId: string }
  /** Make the next boot (only) boot the `ready` slot, through its existing entry. */
  | { readonly type: 'ArmBootOnce'; readonly slot: SlotId }
  | { readonly type: 'DisarmBootOnce' }
  /** Re-attach the lease key to a lease long enough to survive the reboot. */
  | { readonly type: 'ExtendLeaseForReboot'; readonly operationId: string }
  | { readonly type: 'Reboot' }
  | { readonly type: 'WipeEphemeral'; readonly operationId: string }
  | { readonly type: 'StartServices' }
  /** Bring the etcd member back; `asNewMember` after LeaveEtcd or a wipe. */
  | { readonly type: 'RejoinEtcd'; readonly asNewMember: boolean }
  /** Run the health checks until they pass or `deadline` (epoch ms) passes. */
  | { readonly type: 'RunHealthChecks'; readonly slot: SlotId; readonly deadline: number }
  /** Make the booted trial slot the default. */
  | { readonly type: 'Commit'; readonly slot: SlotId }
  | { readonly type: 'MarkSlotBad'; readonly slot: SlotId; readonly reason: string }
  | { readonly type: 'MountEphemeral' }
  | { readonly type: 'Uncordon'; readonly operationId: string }
  | { readonly type: 'ReleaseLease'; readonly operationId: string }
  /** Delete the staging area of a pull that will not be used. */
  | { readonly type: 'DiscardPull'; readonly slot: SlotId };

export type CommandType = Command['type'];

/** Commands that undo a disruptive step; recorded in `state.undo` before the step runs. */
export type UndoCommand = Extract<
  Command,
  {
    readonly type:
      | 'DisarmBootOnce'
      | 'MountEphemeral'
      | 'RejoinEtcd'
      | 'StartServices'
      | 'Uncordon'
      | 'ReleaseLease';
  }
>;
