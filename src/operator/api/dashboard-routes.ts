// SPDX-License-Identifier: Apache-2.0
/**
 * What the dashboard's anonymous listener serves besides the page (issue 14): exactly the reads the
 * page makes (`src/dashboard/api.ts`, `events.ts`) and no more —
 *
 * | route | as on the API? |
 * |---|---|
 * | `GET /v1/rollouts`, `/v1/rollouts/:id` | the same |
 * | `GET /v1/plan` | the same (the waiting list and the windows) |
 * | `GET /v1/machines` | redacted: {@link dashboardMachineView}, no endpoints, labels, hold reasons or errors |
 * | `GET /v1/events` | without `decision` events (holds, registrations: who did what) and without `data` |
 *
 * Not served (404): `/v1/history`, `/metrics`, anything else; every write is 403.
 */
import type { FastifyInstance } from 'fastify';
import { parseInput } from '../../platform/https/input.ts';
import { openSse, serveSse } from '../../platform/https/sse.ts';
import { EventsQuery, OperatorRoutes } from '../../protocol/operator.ts';
import type { HistoryEvent } from '../ports/store.ts';
import type { OperatorApiDeps } from './context.ts';
import { errorAnswer } from './errors.ts';
import { planRoute } from './routes-plan.ts';
import { rolloutReadRoutes } from './routes-rollouts.ts';
import { streamHistory, type HistorySink } from './sse.ts';
import { dashboardMachineView, historyView } from './views.ts';

/**
 * The history stream as the page reads it: the kinds its log lists, each event's time, kind and
 * message. Planner `decision`s (holds and registrations, with who asked and agent endpoints) are
 * skipped — the page never lists them — and `data` is left out.
 */
function openPageSse(raw: Parameters<typeof openSse>[0]): HistorySink {
  const sink = openSse(raw, (e: HistoryEvent) => {
    const view = historyView(e);
    delete view.data;
    return { id: String(e.seq), event: e.kind, data: view };
  });
  return {
    send: (e) => (e.kind === 'decision' ? Promise.resolve() : sink.send(e)),
    error: (body) => sink.error(body),
    end: () => {
      sink.end();
    },
    isClosed: () => sink.isClosed(),
    closed: sink.closed,
  };
}

/** Register the page's reads on the dashboard's app. */
export function dashboardRoutes(app: FastifyInstance, deps: OperatorApiDeps): void {
  rolloutReadRoutes(app, deps);
  planRoute(app, deps);
  app.get(OperatorRoutes.machines, async () => {
    const stored = await deps.store.read();
    return stored.machines.map((m) =>
      dashboardMachineView(m, stored.holds[m.id], deps.observations.get(m.id)),
    );
  });
  app.get(OperatorRoutes.events, async (request, reply) => {
    const q = parseInput(EventsQuery, request.query, 'events query');
    const header = request.headers['last-event-id'];
    const last =
      typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
    await serveSse(
      reply,
      openPageSse,
      (sink) =>
        streamHistory(deps.store, sink, {
          after: last ?? q.after ?? 0,
          follow: q.follow ?? false,
          rollout: q.rollout,
          pollMs: deps.followPollMs ?? 1000,
        }),
      { errorAnswer, onInternalError: deps.onInternalError },
    );
  });
}
