// SPDX-License-Identifier: Apache-2.0
/**
 * The two event streams, both read from the journal so they survive the agent's reboots:
 * `/v1/events` (one operation, replayed after a `Last-Event-ID`, then live until its `result`) and
 * `/v1/logs` (every event, optionally the last N, then live until the client leaves).
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { AgentEvent } from '../../protocol/agent.ts';
import type { JournalStore, OperationSummary } from '../ports/journal-store.ts';
import type { AgentService } from './service.ts';
import { createEventQueue, type SseSink } from './sse.ts';
import type { EventCursor } from './validation.ts';

/** Which operation to stream and from where. */
export interface OperationStreamPlan {
  /** Undefined when the agent has never run an operation: a follower adopts the next one. */
  readonly operationId: string | undefined;
  readonly afterSeq: number;
  /** The journal already held the operation's result when the request came. */
  readonly finished: boolean;
}

/**
 * Resolve the operation a `/v1/events` request means: the one asked for (or named by
 * `Last-Event-ID`), else the running one, else the most recent in the journal. An id neither the
 * journal nor the runner knows is MOLT_OPERATION_NOT_FOUND, so a typo does not follow forever.
 */
export async function planOperationStream(
  deps: { service: AgentService; journal: JournalStore },
  operation: string | undefined,
  cursor: EventCursor | undefined,
): Promise<OperationStreamPlan> {
  const [ops, status] = await Promise.all([deps.journal.operations(), deps.service.status()]);
  const current = status.operation?.id;
  const wanted = operation ?? cursor?.operationId ?? current ?? ops.at(-1)?.operationId;
  if (wanted === undefined) return { operationId: undefined, afterSeq: 0, finished: false };
  return planFor(wanted, ops, current, cursor);
}

function planFor(
  wanted: string,
  ops: readonly OperationSummary[],
  current: string | undefined,
  cursor: EventCursor | undefined,
): OperationStreamPlan {
  const summary = ops.find((o) => o.operationId === wanted);
  if (summary === undefined && wanted !== current) {
    throw new MoltError(
      ErrorCode.OperationNotFound,
      `the agent's journal has no operation ${wanted}`,
      {
        hint: 'list them with `molt node operations`',
      },
    );
  }
  const afterSeq = cursor?.operationId === wanted ? cursor.seq : 0;
  return { operationId: wanted, afterSeq, finished: summary?.result !== undefined };
}

/** Replay, then (when following) stream live events of one operation until its `result`. */
export async function streamOperation(
  journal: JournalStore,
  sink: SseSink,
  plan: OperationStreamPlan & { follow: boolean },
): Promise<void> {
  // Subscribe before reading the journal, so an event appended in between is not lost.
  const queue = createEventQueue();
  const unsubscribe = journal.subscribe((e) => {
    queue.push(e);
  });
  try {
    let op = plan.operationId;
    const replayed =
      op === undefined
        ? { last: plan.afterSeq, ended: false }
        : await replay(journal, sink, op, plan.afterSeq);
    let last = replayed.last;
    if (replayed.ended || !plan.follow || plan.finished) return;
    for (
      let e = await queue.next(sink.closed);
      e !== undefined;
      e = await queue.next(sink.closed)
    ) {
      op ??= e.operationId;
      if (e.operationId !== op || e.seq <= last) continue;
      await sink.send(e);
      last = e.seq;
      if (e.kind === 'result') return;
    }
  } finally {
    unsubscribe();
  }
}

/** Send the journalled events of `op` after `afterSeq`; stops at its result. */
async function replay(
  journal: JournalStore,
  sink: SseSink,
  op: string,
  afterSeq: number,
): Promise<{ last: number; ended: boolean }> {
  let last = afterSeq;
  for (const event of await journal.events(op, afterSeq)) {
    await sink.send(event);
    last = event.seq;
    if (event.kind === 'result') return { last, ended: true };
  }
  return { last, ended: false };
}

const key = (e: AgentEvent): string => `${e.operationId}:${e.seq}`;

/** Every event (the last `tail` when given), then live events while following. */
export async function streamLogs(
  journal: JournalStore,
  sink: SseSink,
  options: { follow: boolean; tail: number | undefined },
): Promise<void> {
  const queue = createEventQueue();
  const unsubscribe = journal.subscribe((e) => {
    queue.push(e);
  });
  try {
    const all = await journal.events();
    const shown =
      options.tail === undefined ? all : options.tail === 0 ? [] : all.slice(-options.tail);
    for (const event of shown) await sink.send(event);
    if (!options.follow) return;
    const replayed = new Set(all.map(key));
    for (
      let e = await queue.next(sink.closed);
      e !== undefined;
      e = await queue.next(sink.closed)
    ) {
      if (!replayed.has(key(e))) await sink.send(e);
    }
  } finally {
    unsubscribe();
  }
}
