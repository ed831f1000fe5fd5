// SPDX-License-Identifier: Apache-2.0
/**
 * What the dashboard's listener serves besides the page (17): the reads the page makes,
 * signing in and out, and the actions a signed-in operator or admin takes — those through the
 * API's own route code (`rolloutActionRoutes`, `holdRoutes`), so every rule of the API holds here.
 *
 * | route | who | as on the API? |
 * |---|---|---|
 * | `GET /v1/session`, `POST` (sign in), `DELETE` (sign out) | anyone | dashboard only |
 * | `GET /v1/dashboard` | readers | dashboard only: machines, rollouts, plan, pools (and blocks, for a signed-in person) in one answer |
 * | `GET /v1/rollouts`, `/v1/rollouts/:id`, `/v1/plan` | readers | the same |
 * | `GET /v1/machines` | readers | redacted: {@link dashboardMachineView} |
 * | `GET /v1/events` | readers | without `data`; `decision` events (holds, blocks, registrations: who did what) only for a signed-in person |
 * | `GET /v1/machines/:id/operations` | readers | dashboard only: the agent's journal, through the operator |
 * | `POST /v1/rollouts/:id/{pause,resume,approve,cancel,rollback}`, `POST /v1/machines/:id/{hold,release}`, `POST /v1/releases/{block,unblock}` | operator, admin | the same routes |
 *
 * Readers: a signed-in person, or anyone with `dashboard.anonymousRead`. Who may call what is
 * `dashboard-server.ts`'s hook; not served (404): `/v1/history`, `/metrics`, anything else. What
 * a reader who has not signed in gets, errors included, passes through `anonymous-view.ts` (no
 * hold's reason, no agent endpoint, no URL).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseInput } from '../../platform/https/input.ts';
import { openSse, serveSse } from '../../platform/https/sse.ts';
import { DashboardRoutes, LoginBody } from '../../protocol/dashboard.ts';
import { EventsQuery, OperatorRoutes } from '../../protocol/operator.ts';
import type { HistoryEvent } from '../ports/store.ts';
import { anonymousRedactor, anonymousView, type Redact } from './anonymous-view.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import type { DashboardAuth } from './dashboard-auth.ts';
import { dashboardState } from './dashboard-state.ts';
import { errorAnswer } from './errors.ts';
import { dashboardMachineView, machineFacts } from './machine-views.ts';
import { holdRoutes } from './routes-machines.ts';
import { planRoute } from './routes-plan.ts';
import { releaseActionRoutes } from './routes-releases.ts';
import { rolloutActionRoutes, rolloutReadRoutes } from './routes-rollouts.ts';
import { streamHistory, type HistorySink } from './sse.ts';
import { historyView } from './views.ts';

/** How long a redaction is used before the stored state is read again for it. */
const redactorMs = 1000;

/** The redaction for a reader who has not signed in, from the stored state at most `redactorMs` old. */
function currentRedactor(deps: OperatorApiDeps): () => Promise<Redact> {
  let made: { redact: Redact; at: number } | undefined;
  return async () => {
    const now = deps.now();
    if (made === undefined || now - made.at >= redactorMs)
      made = { redact: anonymousRedactor(await deps.store.read()), at: now };
    return made.redact;
  };
}

/**
 * The history stream as the page reads it: each event's time, kind and message, no `data`.
 * Planner `decision`s (holds, blocks and registrations, naming who asked) only for a signed-in
 * person; for anyone else, every text through the anonymous redaction (`anonymous-view.ts`).
 */
function openPageSse(
  raw: Parameters<typeof openSse>[0],
  signedIn: boolean,
  redactor: () => Promise<Redact>,
): HistorySink {
  let redact: Redact | undefined;
  const shown = <T>(v: T): T => (redact === undefined ? v : anonymousView(v, redact));
  const sink = openSse(raw, (e: HistoryEvent) => {
    const view = historyView(e);
    delete view.data;
    return { id: String(e.seq), event: e.kind, data: shown(view) };
  });
  const ready = async (): Promise<void> => {
    if (!signedIn) redact = await redactor();
  };
  return {
    send: async (e) => {
      if (e.kind === 'decision' && !signedIn) return;
      await ready();
      await sink.send(e);
    },
    error: async (body) => {
      // The stream is failing, maybe on the store itself: addresses are hidden all the same.
      await ready().catch(() => {
        redact = anonymousRedactor({ machines: [], holds: {} });
      });
      await sink.error(shown(body));
    },
    end: () => {
      sink.end();
    },
    isClosed: () => sink.isClosed(),
    closed: sink.closed,
  };
}

/** `GET /v1/events`: the history, filtered as asked, following when asked. */
function eventsRoute(
  app: FastifyInstance,
  deps: OperatorApiDeps,
  auth: DashboardAuth,
  redactor: () => Promise<Redact>,
): void {
  app.get(OperatorRoutes.events, async (request, reply) => {
    const q = parseInput(EventsQuery, request.query, 'events query');
    const header = request.headers['last-event-id'];
    const last =
      typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
    const signedIn = auth.sessionOf(request) !== undefined;
    await serveSse(
      reply,
      (raw) => openPageSse(raw, signedIn, redactor),
      (sink) =>
        streamHistory(deps.store, sink, {
          after: last ?? q.after ?? 0,
          follow: q.follow ?? false,
          rollout: q.rollout,
          machine: q.machine,
          pollMs: deps.followPollMs ?? 1000,
        }),
      { errorAnswer, onInternalError: deps.onInternalError },
    );
  });
}

/** Operations listed at most; the page shows the latest. */
const shownOperations = 20;

/**
 * `GET /v1/machines/:id/operations`: the machine's journal from its agent (through the operator,
 * which reaches it with its certificate), the latest first; 502 while the agent does not answer.
 */
function operationsRoute(app: FastifyInstance, deps: OperatorApiDeps): void {
  app.get(DashboardRoutes.operations, async (request) => {
    const id = (request.params as { id?: unknown }).id;
    const m = (await deps.store.read()).machines.find((x) => x.id === id);
    if (m === undefined)
      throw new MoltError(
        ErrorCode.UnknownMachine,
        `the operator manages no machine ${String(id)}`,
      );
    if (deps.journal === undefined)
      throw new MoltError(ErrorCode.AgentUnreachable, 'this operator reads no agent journals');
    const ops = await deps.journal.operations(m);
    return ops.toSorted((a, b) => (a.lastTime < b.lastTime ? 1 : -1)).slice(0, shownOperations);
  });
}

/** Signing in and out, and who the page speaks for. */
function sessionRoutes(app: FastifyInstance, auth: DashboardAuth): void {
  app.get(DashboardRoutes.session, (request) =>
    Promise.resolve(auth.viewOf(auth.sessionOf(request))),
  );
  app.post(DashboardRoutes.session, async (request, reply) => {
    const body = parseInput(LoginBody, request.body ?? {}, 'sign-in');
    return auth.viewOf(auth.login(request, reply, body.token));
  });
  app.delete(DashboardRoutes.session, async (request, reply) => {
    auth.logout(request, reply);
    return auth.viewOf(undefined);
  });
}

/** What the dashboard's routes need: the API's dependencies, its sign-in, and who acts. */
export interface DashboardRouteContext {
  readonly deps: OperatorApiDeps;
  readonly auth: DashboardAuth;
  /** The person a write speaks for, as the server's hook checked it. */
  readonly who: RouteContext['who'];
}

/** Register the page's reads, sign-in and actions on the dashboard's app. */
export function dashboardRoutes(app: FastifyInstance, c: DashboardRouteContext): void {
  const { deps, auth } = c;
  const signedIn = (request: FastifyRequest): boolean => auth.sessionOf(request) !== undefined;
  // Every JSON answer (errors included) to a reader who has not signed in; the page's state
  // redacts itself (it is also embedded in the page), a session view holds nothing to hide. One
  // redaction for them and the event streams, at most a second old: anonymous reads must not
  // each read the whole store again.
  const redactor = currentRedactor(deps);
  app.addHook('preSerialization', async (request, _reply, payload: unknown) => {
    const route = request.routeOptions.url;
    if (route === DashboardRoutes.session || route === DashboardRoutes.state) return payload;
    if (signedIn(request)) return payload;
    return anonymousView(payload, await redactor());
  });
  sessionRoutes(app, auth);
  app.get(DashboardRoutes.state, async (request) =>
    dashboardState(deps, auth.viewOf(auth.sessionOf(request))),
  );
  rolloutReadRoutes(app, deps);
  planRoute(app, deps);
  app.get(OperatorRoutes.machines, async (request) => {
    const stored = await deps.store.read();
    const now = deps.now();
    const shown = { fleet: deps.fleet, signedIn: signedIn(request) };
    return stored.machines.map((m) =>
      dashboardMachineView(m, machineFacts(stored, deps.observations, { id: m.id, now }), shown),
    );
  });
  eventsRoute(app, deps, auth, redactor);
  operationsRoute(app, deps);
  const context: RouteContext = { deps, who: c.who };
  rolloutActionRoutes(app, context);
  holdRoutes(app, context);
  releaseActionRoutes(app, context);
}
