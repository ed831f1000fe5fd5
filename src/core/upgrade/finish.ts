// SPDX-License-Identifier: Apache-2.0
/** Ending an operation: back to `Idle` with its result recorded and the undo stack empty. */
import type { Command } from './commands.ts';
import type { ActiveState } from './phase-commands.ts';
import type { OperationResult, Transition } from './state.ts';

export interface Outcome {
  readonly result: OperationResult;
  readonly code?: string;
  readonly reason?: string;
  /** The failure's own sentence when `reason` is only a word (`HealthDeadline`). */
  readonly message?: string;
}

/**
 * `Idle` with `last` set from `outcome`. `cleanup` runs best-effort (no result is fed back):
 * discarding a pull, or the rest of an undo list that failed part-way.
 */
export function finish(
  state: ActiveState,
  now: number,
  outcome: Outcome,
  cleanup: readonly Command[] = [],
): Transition {
  const { op } = state;
  return {
    state: {
      phase: 'Idle',
      undo: [],
      last: {
        operationId: op.id,
        kind: op.kind,
        result: outcome.result,
        ...(outcome.code === undefined ? {} : { code: outcome.code }),
        ...(outcome.message === undefined ? {} : { message: outcome.message }),
        ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
        finishedAt: now,
      },
      ...(state.bootId === undefined ? {} : { bootId: state.bootId }),
      ...(state.bootedSlot === undefined ? {} : { bootedSlot: state.bootedSlot }),
    },
    commands: cleanup,
  };
}

/** The op's pull is of no further use: delete the staging area (upgrades only). */
export function discardPull(state: ActiveState): readonly Command[] {
  return state.op.kind === 'upgrade' ? [{ type: 'DiscardPull', slot: state.op.target }] : [];
}
