// SPDX-License-Identifier: Apache-2.0
/** Turns state changes and command outcomes into journal events (what `molt node events` shows). */
import type { CommandOutcome } from '../../core/upgrade/events.ts';
import type { LastResult, UpgradeState } from '../../core/upgrade/state.ts';
import type { AgentEvent } from '../../protocol/agent.ts';
import type { Clock } from '../ports/clock.ts';
import type { JournalStore, NewAgentEvent } from '../ports/journal-store.ts';
import type { PullProgress } from '../ports/image-source.ts';

type Body = Omit<NewAgentEvent, 'operationId' | 'time' | 'phase'>;

export interface EventLog {
  emit(state: UpgradeState, body: Body): Promise<AgentEvent | undefined>;
  transition(before: UpgradeState, after: UpgradeState): Promise<void>;
  result(last: LastResult, phase: UpgradeState['phase']): Promise<void>;
  outcome(state: UpgradeState, outcome: CommandOutcome): Promise<void>;
  progress(state: UpgradeState, progress: PullProgress): void;
}

/** At most one progress event per this long, whatever the stream does. */
export const ProgressEveryMs = 1000;
/**
 * At most this many progress events per operation: with one a second that is ten minutes of
 * pulling; later progress goes to the journal only once a minute (a journal line per chunk once
 * cost 1 MB for one pull).
 */
export const MaxProgressEvents = 600;
const LateProgressEveryMs = 60_000;

/** The `result` event of a finished operation. */
function resultEvent(last: LastResult, phase: UpgradeState['phase']): Omit<NewAgentEvent, 'time'> {
  const reason = last.reason ?? last.code;
  return {
    operationId: last.operationId,
    kind: 'result',
    phase,
    status: last.result === 'Succeeded' ? 'done' : 'failed',
    message: `${last.kind} ${last.result.toLowerCase()}${reason === undefined ? '' : `: ${reason}`}`,
    result: { result: last.result, ...(reason === undefined ? {} : { reason }) },
    ...(last.code === undefined
      ? {}
      : { error: { code: last.code, message: last.message ?? last.reason ?? last.code } }),
  };
}

/** Whether `after` finished the operation `before` ran. */
function finished(before: UpgradeState, after: UpgradeState): LastResult | undefined {
  const last = after.last;
  if (
    before.op === undefined ||
    after.op?.id === before.op.id ||
    last?.operationId !== before.op.id
  )
    return undefined;
  return last;
}

export function createEventLog(journal: JournalStore, clock: Clock): EventLog {
  let lastProgress = 0;
  let progressOf: string | undefined;
  let progressCount = 0;
  let completed = false;
  const time = (): string => new Date(clock.now()).toISOString();
  const log: EventLog = {
    async emit(state, body) {
      const operationId = state.op?.id;
      if (operationId === undefined) return undefined;
      return journal.append({ ...body, operationId, time: time(), phase: state.phase });
    },
    async transition(before, after) {
      const done = finished(before, after);
      if (done !== undefined) await log.result(done, after.phase);
      if (
        after.op !== undefined &&
        (after.phase !== before.phase || after.op.id !== before.op?.id)
      ) {
        await log.emit(after, { kind: 'phase', status: 'started', message: after.phase });
      }
    },
    async result(last, phase) {
      await journal.append({ ...resultEvent(last, phase), time: time() });
    },
    async outcome(state, outcome) {
      const message =
        outcome.outcome === 'skipped'
          ? `${outcome.command} skipped: ${outcome.reason ?? ''}`
          : `${outcome.command} done`;
      await log.emit(state, { kind: 'log', status: outcome.outcome, message });
    },
    progress(state, progress) {
      // Time alone decides: a stream past its declared total must not switch the throttle off.
      const now = clock.now();
      if (progressOf !== state.op?.id) {
        progressOf = state.op?.id;
        progressCount = 0;
        lastProgress = Number.NEGATIVE_INFINITY;
        completed = false;
      }
      const every = progressCount < MaxProgressEvents ? ProgressEveryMs : LateProgressEveryMs;
      // The one event saying the pull got everything is never throttled away.
      const completes = !completed && progress.bytes === progress.total;
      completed ||= completes;
      if (now - lastProgress < every && !completes) return;
      lastProgress = now;
      progressCount += 1;
      void log
        .emit(state, {
          kind: 'progress',
          status: 'info',
          message: `pulled ${progress.bytes} of ${progress.total} bytes`,
          progress,
        })
        .catch(() => undefined);
    },
  };
  return log;
}
