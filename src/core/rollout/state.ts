// SPDX-License-Identifier: Apache-2.0
/** A rollout's state changes, each carrying why (or clearing the reason of the state it leaves). */
import type { Rollout, RolloutState } from './types.ts';

/**
 * `r` in `state`, with `reason` as its `stateReason` — or none: a reason belongs to the state it
 * was given for, so a resumed rollout no longer says why it was paused.
 */
export function withState(r: Rollout, state: RolloutState, reason?: string): Rollout {
  const next: Rollout & { stateReason?: string } = { ...r, state };
  if (reason === undefined) delete next.stateReason;
  else next.stateReason = reason;
  return next;
}
