// SPDX-License-Identifier: Apache-2.0
/**
 * A person's action on a rollout (pause, resume, approve, cancel) — the API's, the dashboard's
 * and a declared `Rollout` spec's (loop/declared/) alike. The state rules are
 * `rollout-rules.ts`; here the action becomes one compare-and-set on the rollout (re-checked on
 * conflict, so a pass of the loop writing a verdict meanwhile is never overwritten blindly), then
 * a `rollout-state` history event naming who asked.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { blockedBy } from '../../core/quoted-reasons.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import type { Identity } from '../../platform/https/identity.ts';
import type { OperatorStore, ReleaseBlock, StoredState } from '../ports/store.ts';
import {
  recordTransition,
  type TransitionRecord,
  type TransitionSink,
} from '../transitions/record.ts';
import { findRollout } from './rollback.ts';
import { applyRolloutAction, type ActionOutcome, type RolloutAction } from './rollout-rules.ts';

const verb = {
  pause: 'paused',
  resume: 'resumed',
  approve: 'approved',
  cancel: 'cancelled',
} as const;

export interface ActionRequest {
  readonly id: string;
  readonly action: RolloutAction;
  readonly who: Identity;
  readonly force: boolean;
  readonly reason?: string | undefined;
}

/** What an action changed: the state it left, and the machines a forced resume put back. */
interface ActionChange {
  readonly from: string;
  readonly reset: readonly string[];
}

/**
 * The action as one compare-and-set; undefined when the rollout already is so (nothing written:
 * the check runs first on the value read, and again inside the compare-and-set).
 */
async function writeAction(
  store: OperatorStore,
  current: Rollout,
  a: ActionRequest,
): Promise<ActionChange | undefined> {
  const why = a.reason === undefined ? '' : `: ${a.reason}`;
  const o = {
    force: a.force,
    endReason: `cancelled by ${a.who.name}${why}`,
    pauseReason: `paused by ${a.who.name}${why}`,
  };
  let outcome: ActionOutcome = applyRolloutAction(current, a.action, o);
  let from = current.state;
  if (outcome.changed)
    await store.updateRollout(a.id, (stored) => {
      from = stored.state;
      outcome = applyRolloutAction(stored, a.action, o);
      return outcome.next;
    });
  return outcome.changed ? { from, reset: outcome.reset } : undefined;
}

/**
 * A rollout whose release is blocked for its pool is not resumed or approved: the next scan would
 * pause it again. The block a Halted rollout's own halt made is the exception: a forced resume
 * (an admin decided to retry it) lifts it. Returns the blocks to lift once the action is written.
 */
function checkBlocked(stored: StoredState, a: ActionRequest): ReleaseBlock[] {
  if (a.action !== 'resume' && a.action !== 'approve') return [];
  const r = findRollout(stored, a.id);
  const blocks = stored.blocks.filter(
    (b) => b.digest === r.target.digest && (b.pool === undefined || b.pool === r.pool),
  );
  const own = (b: ReleaseBlock): boolean => r.state === 'Halted' && b.rollout === r.id;
  const other = blocks.find((b) => !own(b));
  if (other !== undefined)
    throw new MoltError(
      ErrorCode.RolloutState,
      `release ${r.target.version} is ${blockedBy(other.by, other.reason, other.pool === undefined ? 'every pool' : `pool ${other.pool}`)}`,
      {
        hint: `lift it first: molt releases unblock ${r.target.digest}${other.pool === undefined ? '' : ` --pool ${other.pool}`}`,
      },
    );
  return a.force ? blocks : [];
}

/** Lift the blocks a forced resume of a Halted rollout made moot, each recorded. */
async function liftOwn(deps: TransitionSink, a: ActionRequest, blocks: readonly ReleaseBlock[]) {
  for (const b of blocks)
    await recordTransition(deps, {
      write: (store) => store.removeBlock(b.digest, b.pool),
      record: {
        event: {
          kind: 'decision',
          rollout: a.id,
          message: `release ${b.version ?? b.digest} unblocked for pool ${b.pool ?? '(all)'}: ${a.id} resumed with force by ${a.who.name}`,
          data: { action: 'unblock', by: a.who.name, digest: b.digest, pool: b.pool },
        },
      },
    });
}

function actionRecord(a: ActionRequest, o: ActionChange): TransitionRecord {
  const why = a.reason === undefined ? '' : `: ${a.reason}`;
  const retried = o.reset.length === 0 ? '' : `; retrying ${o.reset.join(', ')}`;
  const state = a.action === 'pause' ? 'Paused' : a.action === 'cancel' ? 'Cancelled' : 'Active';
  return {
    event: {
      kind: 'rollout-state',
      rollout: a.id,
      message: `rollout ${a.id} ${verb[a.action]} by ${a.who.name}${a.force ? ' (forced)' : ''}${why}${retried}`,
      data: {
        state,
        from: o.from,
        by: a.who.name,
        action: a.action,
        ...(o.reset.length > 0 && { reset: [...o.reset] }),
        ...(a.reason !== undefined && { reason: a.reason }),
      },
    },
  };
}

/** The action checked, written and recorded; true when it changed the rollout. */
export async function actOn(sink: TransitionSink, a: ActionRequest): Promise<boolean> {
  const stored = await sink.store.read();
  const current = findRollout(stored, a.id);
  const lift = checkBlocked(stored, a);
  const changed = await recordTransition(sink, {
    write: (store) => writeAction(store, current, a),
    record: (change) => change && actionRecord(a, change),
  });
  if (changed) await liftOwn(sink, a, lift);
  return changed;
}
