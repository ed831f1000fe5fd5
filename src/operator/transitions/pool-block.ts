// SPDX-License-Identifier: Apache-2.0
/**
 * A rollout's release blocked for its pool (a halt, a fleet rollback): discovery does not offer it
 * to that pool again until a person unblocks it (`molt releases unblock`). The store's block, then
 * a `decision` event naming who blocked it and why.
 */
import type { Rollout } from '../../core/rollout/types.ts';
import type { ReleaseBlock } from '../ports/store.ts';
import { recordTransition, type TransitionSink } from './record.ts';

/** Who blocks it (a certificate name, or `operator`), why, and what the message adds for people. */
export interface PoolBlock {
  readonly by: string;
  readonly reason: string;
  /** Said after the reason in the log and the history, e.g. how to offer the release again. */
  readonly note?: string;
}

export async function blockForPool(d: TransitionSink, r: Rollout, b: PoolBlock): Promise<void> {
  const { digest, version } = r.target;
  const at = d.now();
  const block: ReleaseBlock = {
    ...{ digest, version, pool: r.pool, reason: b.reason, by: b.by, at },
    rollout: r.id,
  };
  const note = b.note === undefined ? '' : ` (${b.note})`;
  const message = `release ${version} blocked for pool ${r.pool}: ${b.reason}${note}`;
  await recordTransition(d, {
    write: (store) => store.putBlock(block),
    record: {
      log: message,
      event: {
        at,
        kind: 'decision',
        rollout: r.id,
        message,
        data: { action: 'block', by: b.by, digest, pool: r.pool },
      },
    },
  });
}
