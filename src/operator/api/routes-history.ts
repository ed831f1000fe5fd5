// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/history?after=&limit=&rollout=` (a page, oldest first) and `GET /v1/events` (the same
 * history as SSE: replay after `Last-Event-ID` or `after`, then live with `follow`).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { EventsQuery, HistoryQuery, OperatorRoutes } from '../../protocol/operator.ts';
import type { RouteContext } from './context.ts';
import { errorAnswer, parseInput } from './errors.ts';
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

/**
 * Hand the socket to the SSE writer. Errors after the 200 went out cannot change the status, so
 * they end the stream with an `event: stream-error` frame instead.
 */
async function serveStream(
  reply: FastifyReply,
  c: RouteContext,
  run: (sink: HistorySink) => Promise<void>,
): Promise<void> {
  reply.hijack();
  const sink = openHistorySse(reply.raw);
  try {
    await run(sink);
  } catch (e) {
    const answer = errorAnswer(e);
    if (answer.status === 500) c.deps.onInternalError?.(e);
    await sink.error(answer.body);
  } finally {
    sink.end();
  }
}

export function historyRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.get(OperatorRoutes.history, async (request) => {
    const q = parseInput(HistoryQuery, request.query, 'history query');
    const page = await scanHistory(deps.store, {
      after: q.after ?? 0,
      limit: q.limit,
      rollout: q.rollout,
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
        pollMs: deps.followPollMs ?? 1000,
      }),
    );
  });
}
