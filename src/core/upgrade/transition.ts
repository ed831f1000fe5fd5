// SPDX-License-Identifier: Apache-2.0
/**
 * The node agent's upgrade state machine (docs/adr/0004 §3): pure, total over (phase, event),
 * persisted by the runner before any command it returns runs.
 *
 * | from | event | to: commands |
 * |---|---|---|
 * | Idle | Requested | first phase of the plan (below), its commands |
 * | Staged | Requested(reboot) | same op continues: VerifyingSlot, [AcquiringLease, CheckingQuorum,] Cordoning … ReleasingMounts, ArmingBootOnce, Rebooting |
 * | Staged | Discarded | Idle Failed MOLT_CANCELLED: DiscardPull (the slot stays unbootable) |
 * | other non-Idle | Requested | illegal (admission() answers MOLT_AGENT_BUSY first) |
 * | Pulling / CheckingRollbackTarget | StepFailed | Idle Failed: DiscardPull (node untouched) |
 * | forward phase | StepDone | next phase of the plan: its commands (undo pushed first) |
 * | AcquiringLease … ArmingBootOnce, Rebooting | StepFailed | Aborting: undo newest first → StepDone → Idle Failed: DiscardPull |
 * | Aborting / Recovering | StepFailed | Idle Failed: the rest of the list, best-effort |
 * | Rejoining / HealthChecking / Committing | StepFailed, Tick ≥ deadline | RollingBack: MarkSlotBad, Reboot (reboot op: Aborting) |
 * | Uncordoning / ReleasingLease | StepFailed | Idle Failed (committed; still cordoned / leased): ReleaseLease |
 * | RollingBack | StepFailed | MarkSlotBad failed → [Reboot]; Reboot failed → [] (waits for a boot) |
 * | Recovering | StepDone | Idle RolledBack{rollbackReason} |
 * | any | Booted, same boot id | unchanged, [] — the runner re-runs the record's commands |
 * | Idle | Booted, new boot id | Idle: MountEphemeral, StartServices (best-effort) |
 * | Pulling / CheckingRollbackTarget | Booted new | Idle Failed MOLT_INTERRUPTED: DiscardPull, MountEphemeral, StartServices |
 * | AcquiringLease … ArmingBootOnce | Booted new: trial slot and armed → Rejoining; else | Aborting: restore everything after the reboot |
 * | Staged | Booted new: target → Rejoining (a journal from before staging was locked); else | Staged: MountEphemeral, StartServices |
 * | Rebooting | Booted new: target → Rejoining (deadline = now + healthDeadlineMs); else | Recovering(BootFailed) |
 * | Rejoining / HealthChecking | Booted new: target → Rejoining (same deadline); else | Recovering(RebootedBeforeCommit) |
 * | Committing / Uncordoning / ReleasingLease | Booted new: target → Rejoining (new deadline); else | Recovering |
 * | Aborting | Booted new: trial slot and armed → RollingBack; else | Aborting: restore everything after the reboot |
 * | RollingBack / Recovering | Booted new: target again → RollingBack (attempt ≤ 3) or Idle Failed MOLT_NO_VALID_SLOT: ReleaseLease; else | Recovering |
 * | any | Tick (other than above) | unchanged, [] |
 * | not Staged | Discarded | illegal (the runner feeds it only in Staged) |
 * | Idle, Staged, Rebooting, RollingBack | StepDone | illegal (nothing reports back) |
 * | any | StepDone / StepFailed of another phase, StepFailed of a command not issued | illegal |
 *
 * Plan (plan.ts): upgrade = Pulling, [CP: AcquiringLease, CheckingQuorum], Cordoning, Draining,
 * StoppingServices, [CP && !preserve: LeavingEtcd], ReleasingMounts, WritingSlot, VerifyingSlot,
 * ArmingBootOnce, Rebooting; staged upgrade = Pulling, WritingSlot, VerifyingSlot, Staged (nothing
 * disrupted and nothing armed until the reboot request applies it); rollback = CheckingRollbackTarget, …,
 * ReleasingMounts, ArmingBootOnce, Rebooting; reboot = the disruption, Rebooting (target = the
 * booted slot). After boot: Rejoining, HealthChecking, [not reboot: Committing], Uncordoning,
 * [CP: ReleasingLease], Idle (Succeeded; a rollback ends RolledBack{manual}).
 *
 * Runner conventions:
 * - On start: load the record, feed `Booted{bootId, slot}`. A same boot id (agent restart)
 *   returns no commands: run the record's `commands` again (all are idempotent) and feed their
 *   result as below; do not overwrite the record with the empty list. A new boot id returns the
 *   commands to run. While `holdsLease(state)`, resume the lease keep-alive on every start (the
 *   lease id is not journalled: `Rebooting` never reports back).
 * - After every transition: persist `{state, commands}`, then run the commands in order, then
 *   feed exactly one event: `StepDone{phase: <phase they were issued in>, outcomes}` or, on the
 *   first failure, `StepFailed{phase, command, error}` (timeouts as indeterminate). A skipped
 *   Kubernetes step is an outcome `skipped` in StepDone. Feed nothing after the commands of a
 *   quiescent phase (Idle, Staged): they are best-effort; run them all, log failures. An empty
 *   command list means: wait for an outside event.
 * - `Reboot` never returns. `RunHealthChecks` blocks until healthy or its deadline (then fails
 *   with MOLT_HEALTH_DEADLINE); bound the other Rejoining commands by `op.deadline` too.
 * - Tick: feed it only between command lists (serialised with the other events), e.g. once a
 *   second; past `op.deadline` in Rejoining / HealthChecking it rolls back.
 * - Requests: ask `admission()` and feed `Requested` in the same serialised step. In Staged the
 *   reboot continues the staged operation: answer with `state.op.id`, not the request's id.
 * - Cancel: in Staged feed `Discarded` (in the same serialised step that saw Staged).
 */
import type { UpgradeEvent } from './events.ts';
import { onBooted } from './boot.ts';
import { onStepFailed, onTick } from './failure.ts';
import { onStepDone } from './forward.ts';
import { illegal, type IllegalTransition } from './illegal.ts';
import type { ActiveState } from './phase-commands.ts';
import { onDiscarded, onRequested } from './request.ts';
import type { Transition, UpgradeState } from './state.ts';
import { holdsLease as undoHoldsLease } from './undo.ts';

export { illegal, isIllegal, type IllegalTransition } from './illegal.ts';
export { admission, type Admission } from './request.ts';
export { phaseCommands } from './phase-commands.ts';
export { MaxRollbackAttempts } from './boot.ts';
export { postBootPlan, preRebootPlan } from './plan.ts';

/** Whether the cluster lease may be held: the runner keeps it alive (after every start) while true. */
export function holdsLease(state: UpgradeState): boolean {
  return undoHoldsLease(state.undo);
}

function active(state: UpgradeState): ActiveState | undefined {
  return state.phase === 'Idle' || state.op === undefined ? undefined : { ...state, op: state.op };
}

/** The one transition function: the next state and the commands to run, or why the pair is illegal. */
export function transition(
  state: UpgradeState,
  event: UpgradeEvent,
  now: number,
): Transition | IllegalTransition {
  switch (event.type) {
    case 'Requested':
      return onRequested(state, event.request, now);
    case 'Booted':
      return onBooted(state, event, now);
    case 'Tick': {
      const s = active(state);
      return s === undefined ? { state, commands: [] } : onTick(s, now);
    }
    case 'Discarded':
      return onDiscarded(state, event.by, now);
    case 'StepDone':
    case 'StepFailed': {
      const s = active(state);
      if (s === undefined) return illegal(`${event.type} while ${state.phase}: no step runs`);
      if (event.phase !== s.phase)
        return illegal(`${event.type} of ${event.phase} while in ${s.phase}`);
      return event.type === 'StepDone' ? onStepDone(s, event, now) : onStepFailed(s, event, now);
    }
  }
}
