// SPDX-License-Identifier: Apache-2.0
/**
 * The pull's deadline and its cancellation (a registry streaming zeros kept an agent
 * `Pulling` for minutes, and nothing could stop it). Every PullImage runs under an AbortSignal that
 * fires when the machine's pull deadline passes (`MOLT_PULL_DEADLINE`) or when an operator cancels
 * (`MOLT_CANCELLED`); the image source then stops its transfer and removes the staging area, the
 * step fails, and the machine goes back to Idle (Failed, node untouched) like any failed pull.
 *
 * (A staged upgrade, written but not armed, can be discarded too: the runner does that itself.)
 *
 * Cancel is accepted only while the operation is Pulling: that phase changes nothing but the
 * staging area — and, with a slot store that writes in place (docs/adr/0008 §3), the inactive slot,
 * already unbootable by then: the node is still in service, and the booted slot untouched. From the disruption on (cordon, drain, stopping services) and above all once the
 * inactive slot is being written or the boot entry switched, a cancel is refused with
 * `MOLT_NOT_CANCELLABLE` — past that point only the machine's own undo or rollback is safe.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { Phase } from '../../core/upgrade/phase.ts';
import type { UpgradeState } from '../../core/upgrade/state.ts';
import type { Clock } from '../ports/clock.ts';

/** The machine config's default (`pullTimeoutSeconds`): 30 minutes. */
export const DefaultPullTimeoutMs = 30 * 60 * 1000;

export interface PullRun {
  readonly signal: AbortSignal;
  /** The step ended: stop its deadline timer. */
  end(): void;
}

export interface PullControl {
  /** A signal for the pull the operation `operationId` is about to run. */
  begin(operationId: string): PullRun;
  /** Cancel the running pull on behalf of `by`; throws `MOLT_NOT_CANCELLABLE` outside a pull. */
  cancel(state: UpgradeState, by: string): { operationId: string };
}

export function createPullControl(clock: Clock, timeoutMs = DefaultPullTimeoutMs): PullControl {
  let running: { operationId: string; controller: AbortController } | undefined;
  return {
    begin(operationId) {
      const controller = new AbortController();
      const timer = new AbortController();
      running = { operationId, controller };
      clock.sleep(timeoutMs, timer.signal).then(
        () => {
          controller.abort(
            new MoltError(
              ErrorCode.PullDeadline,
              `the image pull did not finish within ${Math.round(timeoutMs / 1000)} s`,
              {
                hint: 'the registry is too slow or the image too large; pullTimeoutSeconds in the machine config sets the deadline',
              },
            ),
          );
        },
        () => undefined,
      );
      return {
        signal: controller.signal,
        end() {
          timer.abort();
          if (running?.controller === controller) running = undefined;
        },
      };
    },
    cancel(state, by) {
      const op = state.op;
      if (op === undefined)
        throw new MoltError(ErrorCode.NotCancellable, 'no operation is running', {
          hint: 'molt node status shows the machine',
        });
      if (state.phase !== Phase.Pulling || running?.operationId !== op.id)
        throw new MoltError(
          ErrorCode.NotCancellable,
          `operation ${op.id} is ${state.phase}: only a pull (phase Pulling) or a staged upgrade (Staged) can be cancelled`,
          {
            hint: 'past the pull the machine is being changed; let the operation finish or fail, then roll back if needed',
            details: { operationId: op.id, kind: op.kind, phase: state.phase },
          },
        );
      running.controller.abort(
        new MoltError(ErrorCode.Cancelled, `the pull was cancelled by ${by}`, {
          hint: 'the machine stayed in service on its booted slot; request the upgrade again when ready',
        }),
      );
      return { operationId: op.id };
    },
  };
}
