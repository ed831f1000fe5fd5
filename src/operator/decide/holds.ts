// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's holds on the machines' agents (docs/adr/0004 §11). The store's hold is what a
 * person asked the operator for; the agent keeps its own copy so that it refuses direct upgrades
 * too. Each pass compares the two, by level, and pushes what differs — so a hold (or release) the
 * API could not push at once, because the agent was away, reaches it once it answers again.
 *
 * The operator owns only the holds it pushed, which name a person in `onBehalfOf`. A hold set on
 * the agent directly (`molt node hold`) is a person's, never replaced or cleared by the operator;
 * its planner waits for it as for its own ({@link effectiveHold}).
 */
import { parseTime } from '../../core/time.ts';
import type { HoldView } from '../../protocol/agent-hold.ts';
import type { AgentHold } from '../ports/agents.ts';
import type { Hold } from '../ports/store.ts';

/** Whom a stored hold is pushed for (holds stored before holds had an author name none). */
export const onBehalfOf = (hold: Hold): string => hold.by ?? 'the operator';

/** What to do about one machine's hold on its agent. */
export type HoldStep =
  | { readonly kind: 'set'; readonly hold: AgentHold }
  | { readonly kind: 'clear' }
  | { readonly kind: 'none' };

const none: HoldStep = { kind: 'none' };

function same(stored: Hold, reported: HoldView): boolean {
  return (
    reported.reason === stored.reason &&
    parseTime(reported.until) === stored.until &&
    reported.onBehalfOf === onBehalfOf(stored)
  );
}

/**
 * `stored`: the store's hold of the machine; `reported`: the hold its agent reported (null: none;
 * undefined: no answer, or an agent older than holds — nothing is pushed to it). An unexpired
 * stored hold is pushed where the agent keeps another of the operator's or none; the operator's
 * hold is cleared once the store has none (released, or ended).
 */
export function holdStep(
  stored: Hold | undefined,
  reported: HoldView | null | undefined,
  now: number,
): HoldStep {
  if (reported === undefined) return none;
  if (reported !== null && reported.onBehalfOf === undefined) return none;
  // A pin is the operator's alone: the agent would refuse the pinned release too.
  const wanted =
    stored !== undefined && stored.version === undefined && stored.until > now ? stored : undefined;
  if (wanted !== undefined) {
    if (reported !== null && same(wanted, reported)) return none;
    return {
      kind: 'set',
      hold: { reason: wanted.reason, until: wanted.until, onBehalfOf: onBehalfOf(wanted) },
    };
  }
  return reported === null ? none : { kind: 'clear' };
}

/**
 * The hold the planner waits for: the store's or the one the agent reported (a direct hold, or
 * the operator's not yet cleared there), whichever ends later — the agent would refuse the
 * upgrade until then anyway.
 */
export function effectiveHold(
  stored: Hold | undefined,
  reported: HoldView | null | undefined,
): { readonly reason: string; readonly until: number } | undefined {
  const agent =
    reported == null
      ? undefined
      : { reason: reported.reason, until: parseTime(reported.until) ?? 0 };
  if (stored === undefined || stored.version !== undefined) return agent;
  if (agent === undefined || stored.until >= agent.until)
    return { reason: stored.reason, until: stored.until };
  return agent;
}
