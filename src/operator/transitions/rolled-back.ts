// SPDX-License-Identifier: Apache-2.0
/**
 * A rollout a fleet rollback reverses ends `RolledBack`, naming its rollback, and its release is
 * blocked for the pool: discovery stops offering what a person (or the pool's `onHalt: rollback`)
 * took back, `molt plan` and `molt releases blocked` say so and why, and `molt releases unblock`
 * offers it again (a new rollout). Written by the API when a person rolls back, and by the loop
 * for the pool's own rollbacks and for any original an interrupted write left behind.
 */
import { reversible, type Reversed } from '../decide/fleet-rollback.ts';
import { blockForPool } from './pool-block.ts';
import { recordTransition, type TransitionSink } from './record.ts';

/** Who rolled it back (a certificate name, or `operator`) and their reason, if they gave one. */
export interface RolledBackBy {
  readonly by: string;
  readonly reason?: string | undefined;
}

/** `rolled back by <back> to <version>: <reason>` — the original's end reason and its block's. */
export const rolledBackReason = (back: Reversed['back'], why?: string): string =>
  `rolled back by ${back.id} (to ${back.target.version})${why === undefined ? '' : `: ${why}`}`;

/**
 * Block first, then end the rollout: an operator stopped between the two finds the original still
 * reversible next pass and does both again, and never offers the rolled-back release meanwhile.
 * An image rollout's target is never offered again once it ended, so it needs no block.
 */
export async function endRolledBack(
  d: TransitionSink,
  x: Reversed,
  who: RolledBackBy,
): Promise<void> {
  const { rollout, back } = x;
  const reason = rolledBackReason(back, who.reason);
  if (rollout.images === undefined) {
    const { version } = rollout.target;
    const note = `offer it again: molt releases unblock ${version} --pool ${rollout.pool}`;
    await blockForPool(d, rollout, { by: who.by, reason, note });
  }
  const message = `rollout ${rollout.id} rolled back: ${reason}`;
  await recordTransition(d, {
    write: async (store) => {
      const outcome = { changed: false };
      await store.updateRollout(rollout.id, (cur) => {
        outcome.changed = reversible(cur.state);
        return outcome.changed ? { ...cur, state: 'RolledBack', endReason: reason } : cur;
      });
      return outcome.changed;
    },
    record: (changed) =>
      changed
        ? {
            log: message,
            event: {
              kind: 'rollout-state',
              rollout: rollout.id,
              message,
              data: { state: 'RolledBack', reason, rollbackBy: back.id, by: who.by },
            },
          }
        : undefined,
  });
}
