// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/history?after=&limit=&rollout=` (a page, oldest first) and `GET /v1/events` (the same
 * history as SSE: replay after `Last-Event-ID` or `after`, then live with `follow`).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseInput } from '../../platform/https/input.ts';
import { serveSse } from '../../platform/https/sse.ts';
import { EventsQuery, HistoryQuery, OperatorRoutes } from '../../protocol/operator.ts';
import type { RouteContext } from './context.ts';
import { errorAnswer } from './errors.ts';
import { openHistorySse, scanHistory, streamHistory, type HistorySink } from './sse.ts';
import { historyView } from './views.ts';

/** A `Last-Event-ID`: the seq of the last event seen. */
function lastEventId(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,15}$/.test(text))
    throw new MoltError(ErrorCode.BadInput, `invalid Last-Event-ID "${text}": expected a seq`);
  return Number(text);
}

/** Serve the history stream; a failure after the 200 ends it with a `stream-error` frame. */
function serveStream(
  reply: FastifyReply,
  c: RouteContext,
  run: (sink: HistorySink) => Promise<void>,
): Promise<void> {
  return serveSse(reply, openHistorySse, run, {
    errorAnswer,
    onInternalError: c.deps.onInternalError,
  });
}

export function historyRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.get(OperatorRoutes.history, async (request) => {
    const q = parseInput(HistoryQuery, request.query, 'history query');
    const page = await scanHistory(deps.store, {
      after: q.after ?? 0,
      limit: q.limit,
      rollout: q.rollout,
      machine: q.machine,
    });
    return page.events.map(historyView);
  });
  app.get(OperatorRoutes.events, async (request, reply) => {
    const q = parseInput(EventsQuery, request.query, 'events query');
    const after = lastEventId(request.headers['last-event-id']) ?? q.after ?? 0;
    await serveStream(reply, c, (sink) =>
      streamHistory(deps.store, sink, {
        after,
        follow: q.follow ?? false,
        rollout: q.rollout,
        machine: q.machine,
        pollMs: deps.followPollMs ?? 1000,
      }),
    );
  });
}
