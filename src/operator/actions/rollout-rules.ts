// SPDX-License-Identifier: Apache-2.0
/**
 * What a person may do to a rollout (docs/adr/0005 §5), as a pure function of its stored value, so
 * it can run inside the store's compare-and-set (which may call it again after a conflict):
 *
 * | action  | from                        | to     | notes                                        |
 * |---------|-----------------------------|--------|----------------------------------------------|
 * | pause   | Active                      | Paused | machines in flight finish; none start        |
 * | resume  | Paused                      | Active |                                              |
 * | resume  | Halted (admin, force: true) | Active | Failed/RolledBack machines back to Pending   |
 * | approve | AwaitingApproval            | Active |                                              |
 * | cancel  | AwaitingApproval, Active, Paused, Halted | Cancelled | final; machines in flight finish, none start; the release is not offered to the pool again |
 *
 * Asking for the state a rollout is already in (pause a Paused one, resume or approve an Active
 * one) changes nothing and is not an error, so a client that retries after a lost answer is safe.
 * Any other pair is MOLT_ROLLOUT_STATE (409); an ended rollout (Completed, Superseded,
 * Cancelled) never changes.
 *
 * Why a forced resume of a Halted rollout resets its failures: the planner halts a rollout whose
 * failed + rolled-back machines reach the failure budget, so flipping the state alone would halt
 * it again on the next pass. Putting those machines back to Pending retries them under the same
 * policies; the start history (and so every rate limit) is kept. Transitions to: Active.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { MachineProgress, Rollout, RolloutState } from '../../core/rollout/types.ts';
import { withState } from '../../core/rollout/state.ts';

export type RolloutAction = 'pause' | 'resume' | 'approve' | 'cancel';

/** The outcome of an action on one stored value. */
export interface ActionOutcome {
  readonly next: Rollout;
  readonly changed: boolean;
  /** Machines a forced resume put back to Pending. */
  readonly reset: readonly string[];
}

const targetOf: Readonly<Record<RolloutAction, RolloutState>> = {
  pause: 'Paused',
  resume: 'Active',
  approve: 'Active',
  cancel: 'Cancelled',
};

const allowedFrom: Readonly<Record<RolloutAction, readonly RolloutState[]>> = {
  pause: ['Active'],
  resume: ['Paused', 'Halted'],
  approve: ['AwaitingApproval'],
  cancel: ['AwaitingApproval', 'Active', 'Paused', 'Halted'],
};

const pastTense: Readonly<Record<RolloutAction, string>> = {
  pause: 'paused',
  resume: 'resumed',
  approve: 'approved',
  cancel: 'cancelled',
};

function refuse(r: Rollout, action: RolloutAction, hint: string): MoltError {
  return new MoltError(
    ErrorCode.RolloutState,
    `rollout ${r.id} is ${r.state}: it cannot be ${pastTense[action]}`,
    { hint, details: { rollout: r.id, state: r.state, action } },
  );
}

function hintFor(r: Rollout, action: RolloutAction): string {
  if (r.state === 'Completed')
    return 'a completed rollout is final; a new release makes a new rollout';
  if (r.state === 'RolledBack')
    return `a rolled-back rollout is final (${r.endReason ?? 'its rollback reversed it'}); offer its release again with \`molt releases unblock ${r.target.version} --pool ${r.pool}\``;
  if (r.state === 'Superseded' || r.state === 'Cancelled')
    return `a ${r.state.toLowerCase()} rollout is final${r.endReason === undefined ? '' : ` (${r.endReason})`}`;
  if (r.state === 'Halted' && action === 'resume')
    return 'a halted rollout spent its failure budget; an admin may retry its failed machines with `molt rollout resume ID --force`';
  if (r.state === 'AwaitingApproval') return 'approve it first: `molt rollout approve ID`';
  if (r.state === 'Paused') return 'resume it: `molt rollout resume ID`';
  return `allowed from: ${allowedFrom[action].join(', ')}`;
}

const isFailure = (p: MachineProgress): boolean => p.phase === 'Failed' || p.phase === 'RolledBack';

/** Apply `action` to the stored rollout `r`; throws MOLT_ROLLOUT_STATE when `r.state` does not allow it. */
export function applyRolloutAction(
  r: Rollout,
  action: RolloutAction,
  o: {
    readonly force: boolean;
    readonly endReason?: string | undefined;
    /** Who paused it and why: the paused rollout's `stateReason`. */
    readonly pauseReason?: string | undefined;
  },
): ActionOutcome {
  const to = targetOf[action];
  if (r.state === to) return { next: r, changed: false, reset: [] };
  const forcedResume = action === 'resume' && r.state === 'Halted';
  if (!allowedFrom[action].includes(r.state) || (forcedResume && !o.force))
    throw refuse(r, action, hintFor(r, action));
  if (action === 'cancel') {
    const next = {
      ...withState(r, to),
      ...(o.endReason !== undefined && { endReason: o.endReason }),
    };
    return { next, changed: true, reset: [] };
  }
  if (!forcedResume) {
    const why = action === 'pause' ? o.pauseReason : undefined;
    return { next: withState(r, to, why), changed: true, reset: [] };
  }
  const reset = Object.entries(r.machines)
    .filter(([, p]) => isFailure(p))
    .map(([id]) => id);
  const machines = Object.fromEntries(
    Object.entries(r.machines).map(([id, p]) => [
      id,
      isFailure(p) ? { phase: 'Pending' as const } : p,
    ]),
  );
  return { next: { ...withState(r, to), machines }, changed: true, reset };
}
