// SPDX-License-Identifier: Apache-2.0
/** Creating a rollout and recording it (`rollout-created`): the loop's, the image driver's, Cluster API's. */
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import { recordTransition, type TransitionSink } from './record.ts';

/**
 * Create `r` and record `message` with `data`. With `ifAbsent`, a rollout of that id already
 * there (another writer asked at the same time) is not an error: nothing is recorded.
 */
export async function createRecorded(
  d: TransitionSink,
  r: Rollout,
  o: {
    readonly message: string;
    readonly data: Readonly<Record<string, unknown>>;
    readonly ifAbsent?: boolean;
  },
): Promise<void> {
  try {
    await recordTransition(d, {
      write: (store) => store.createRollout(r),
      record: {
        log: o.message,
        event: { kind: 'rollout-created', rollout: r.id, message: o.message, data: o.data },
      },
    });
  } catch (e) {
    if (o.ifAbsent !== true || !isMoltError(e, ErrorCode.RolloutExists)) throw e;
  }
}
