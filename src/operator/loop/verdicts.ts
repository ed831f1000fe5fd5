// SPDX-License-Identifier: Apache-2.0
/**
 * The rollout verdicts of a plan (docs/adr/0005 §4): a rollout whose failure budget is spent halts
 * — and its release is blocked for the pool first — and an Active rollout with every
 * machine done completes.
 */
import type { Plan, Rollout } from '../../core/rollout/types.ts';
import { withState } from '../../core/rollout/state.ts';
import { blockForPool } from '../transitions/pool-block.ts';
import { recordTransition, type TransitionSink } from '../transitions/record.ts';

/** The state a verdict moves `r` to; undefined when it stays (already so, or ended). */
function nextState(r: Rollout, verdict: 'halt' | 'complete'): 'Halted' | 'Completed' | undefined {
  if (r.state === 'Completed') return undefined;
  if (verdict === 'halt') return r.state === 'Halted' ? undefined : 'Halted';
  return r.state === 'Active' ? 'Completed' : undefined;
}

export async function verdicts(
  d: TransitionSink,
  plan: Plan,
  rollouts: ReadonlyMap<string, Rollout>,
): Promise<void> {
  for (const v of plan.rollouts) {
    const r = rollouts.get(v.rollout);
    if (r === undefined || v.verdict === 'continue') continue;
    const next = nextState(r, v.verdict);
    if (next === undefined) continue;
    const message = `rollout ${r.id} ${next.toLowerCase()}${v.message === undefined ? '' : `: ${v.message}`}`;
    // The block first: an operator stopped between the two writes halts the rollout again next
    // pass (or finds it paused as blocked), and never offers the release that failed again.
    if (next === 'Halted') await blockHalted(d, r, message);
    await recordTransition(d, {
      write: (store) =>
        store.updateRollout(r.id, (cur) =>
          next === 'Halted' ? withState(cur, next, v.message) : withState(cur, next),
        ),
      record: {
        log: message,
        event: { kind: 'rollout-state', rollout: r.id, message, data: { state: next } },
      },
    });
  }
}

/**
 * Block the release a rollout halted on for its pool, so discovery does not offer it again until a
 * person unblocks it or resumes the rollout with force. A rollback rollout's target is the release
 * the pool ran before: it is not blocked; nor is an image rollout's, never offered again once its
 * rollout ended (core/images/rollouts.ts).
 */
async function blockHalted(d: TransitionSink, r: Rollout, reason: string): Promise<void> {
  if (r.rollbackOf !== undefined || r.images !== undefined) return;
  await blockForPool(d, r, { by: 'operator', reason });
}
