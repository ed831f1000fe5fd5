// SPDX-License-Identifier: Apache-2.0
/**
 * An upgrade the agent refuses for who is asking: MOLT_FORBIDDEN — e.g. a pool's drain
 * policy asks for `force-delete` and the machine's config grants that to admin only — will be
 * refused again on every retry, and the agent refused it before touching the machine. So the
 * machine's start fails at once with the agent's reason and hint (it counts against the failure
 * budget, and `molt rollout status` shows why), instead of being asked again every pass.
 */
import { ErrorCode, type MoltError } from '../../core/errors.ts';
import type { MachineProgress, Rollout } from '../../core/rollout/types.ts';
import type { MachineRecord } from '../ports/store.ts';
import { recordTransition } from '../transitions/record.ts';
import type { ReconcileDeps } from './deps.ts';
import { setProgress } from './machine-progress.ts';

/**
 * A start the agent refused because the machine is held there (MOLT_MACHINE_HELD: a hold set on
 * the agent after the operator last looked): the machine goes back to waiting, untouched and not
 * failed, instead of staying in flight and being asked again every pass. The planner sees the
 * hold once it asks the agent again — before any new start (`decide/polling.ts`).
 */
export async function unstartHeld(
  d: ReconcileDeps,
  rollout: Rollout,
  machine: MachineRecord,
  refusal: MoltError,
): Promise<void> {
  await recordTransition(d, {
    write: (store) =>
      store.updateRollout(rollout.id, (cur) => {
        const p = cur.machines[machine.id];
        if (p?.phase !== 'InFlight' || p.operationId !== undefined) return cur;
        const machines = Object.fromEntries(
          Object.entries(cur.machines).filter(([id]) => id !== machine.id),
        );
        return { ...cur, machines };
      }),
    record: {
      log: `${rollout.id}: ${machine.id} is held on its agent; it waits (${refusal.message})`,
      event: {
        kind: 'warning',
        rollout: rollout.id,
        machine: machine.id,
        message: `${machine.id}: not started, the machine is held on its agent: ${refusal.message}`,
      },
    },
  });
}

/** Agent codes that end a machine's start instead of being retried. */
export const REFUSED_BY_AGENT: ReadonlySet<string> = new Set<string>([ErrorCode.Forbidden]);

/** Record `machine`'s start as Failed with the agent's refusal as the reason. */
export async function failRefusedStart(
  d: ReconcileDeps,
  rollout: Rollout,
  machine: MachineRecord,
  refusal: MoltError,
): Promise<void> {
  const reason = `the agent refused the upgrade: ${refusal.code}: ${refusal.message}${
    refusal.hint === undefined ? '' : ` (${refusal.hint})`
  }`;
  const p = rollout.machines[machine.id];
  const progress: MachineProgress = {
    phase: 'Failed',
    ...(p?.startedAt !== undefined && { startedAt: p.startedAt }),
    finishedAt: d.now(),
    reason,
  };
  const message = `${machine.id}: Failed (${reason})`;
  await recordTransition(d, {
    write: (store) => setProgress(store, rollout.id, machine.id, progress),
    record: {
      log: `${rollout.id}: ${message}`,
      event: {
        kind: 'machine-result',
        rollout: rollout.id,
        machine: machine.id,
        message,
        data: { phase: 'Failed', reason },
      },
    },
  });
}

/**
 * Settle a start the agent refused: for who asks ({@link REFUSED_BY_AGENT}) it fails with the
 * agent's reason; for the machine's hold it waits again ({@link unstartHeld}). False for any other
 * refusal: the next pass asks again.
 */
export async function settleRefusal(
  d: ReconcileDeps,
  rollout: Rollout,
  machine: MachineRecord,
  refusal: MoltError,
): Promise<boolean> {
  if (REFUSED_BY_AGENT.has(refusal.code)) await failRefusedStart(d, rollout, machine, refusal);
  else if (refusal.code === ErrorCode.MachineHeld) await unstartHeld(d, rollout, machine, refusal);
  else return false;
  return true;
}
