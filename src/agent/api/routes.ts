// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's routes (docs/adr/0004 §6) on a Fastify instance: who may call what, request
 * validation, and the journal-backed event streams. Transport (TLS) is the caller's business, so
 * tests drive the same routes with `inject()` and an injected identity.
 */
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerFactory,
  type FastifyServerOptions,
} from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import {
  AgentRoutes,
  RebootRequestBody,
  RollbackRequestBody,
  UpgradeRequestBody,
  type AgentPermission,
} from '../../protocol/agent.ts';
import type { JournalStore } from '../ports/journal-store.ts';
import type { AgentController, Identity, SubmitRequest } from './controller.ts';
import { errorAnswer } from './errors.ts';
import { requirePermission } from './identity.ts';
import { openSse, type SseSink } from './sse.ts';
import { planOperationStream, streamLogs, streamOperation } from './streams.ts';
import { EventsQuery, LogsQuery, parseInput, parseLastEventId } from './validation.ts';

/** What the routes need. */
export interface AgentAppDeps {
  readonly controller: AgentController;
  readonly journal: JournalStore;
  /** The caller of a request: in production the verified peer certificate ({@link peerIdentity}). */
  readonly identify: (request: FastifyRequest) => Identity;
  /** Told about every 500 (a bug), since Fastify's logger is off and the body carries no stack. */
  readonly onInternalError?: (error: unknown) => void;
}

/** Options of {@link buildAgentApp}. */
export interface AgentAppOptions {
  /** Creates the HTTPS server; omitted in `inject()` tests. */
  readonly serverFactory?: FastifyServerFactory;
}

const submitKinds = ['upgrade', 'rollback', 'reboot'] as const;

const refuseJsonSchema = (): never => {
  throw new MoltError(ErrorCode.Internal, 'agent routes validate with zod, not JSON schemas');
};

/**
 * The routes validate with zod (validation.ts) and reply with plain JSON, so Fastify's JSON-schema
 * compilers are never used; without these factories Fastify loads its defaults anyway when the
 * instance is built — Ajv (three copies), ajv-formats and fast-json-stringify, 3–5 MB of the idle
 * agent's RSS (benchmark P6). A route given a schema fails at `listen()` rather than load them.
 */
const noJsonSchemas: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: { buildValidator: refuseJsonSchema, buildSerializer: refuseJsonSchema },
};

/** A Fastify instance serving the agent API (not yet listening). */
export function buildAgentApp(deps: AgentAppDeps, options: AgentAppOptions = {}): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: 64 * 1024,
    // Open event streams must not keep close() waiting: a reboot closes the API mid-stream and
    // followers reconnect with Last-Event-ID.
    forceCloseConnections: true,
    schemaController: noJsonSchemas,
    ...(options.serverFactory && { serverFactory: options.serverFactory }),
  });
  const identities = new WeakMap<FastifyRequest, Identity>();
  app.addHook('onRequest', async (request) => {
    const identity = deps.identify(request);
    identities.set(request, identity);
    const permission: AgentPermission = request.method === 'POST' ? 'operate' : 'read';
    requirePermission(
      identity,
      permission,
      permission === 'operate' ? `call ${request.url}` : `read ${request.url}`,
    );
    await Promise.resolve();
  });
  app.setErrorHandler(async (error, _request, reply) => {
    const answer = errorAnswer(error);
    if (answer.status === 500) deps.onInternalError?.(error);
    return reply.code(answer.status).send(answer.body);
  });
  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({
      code: ErrorCode.BadInput,
      message: `the agent has no route ${request.method} ${request.url}`,
    }),
  );
  const who = (request: FastifyRequest): Identity => {
    const identity = identities.get(request);
    if (identity === undefined) throw new MoltError(ErrorCode.Internal, 'request without identity');
    return identity;
  };

  app.get(AgentRoutes.status, () => deps.controller.status());
  app.get(AgentRoutes.operations, () => deps.journal.operations());
  for (const kind of submitKinds) {
    app.post(AgentRoutes[kind], async (request, reply) => {
      const submit = submitRequest(kind, request.body ?? {}, who(request));
      if (submit.body.force) requirePermission(submit.identity, 'force', `${kind} with force`);
      return reply.code(202).send(await deps.controller.submit(submit));
    });
  }
  app.get(AgentRoutes.events, async (request, reply) => {
    const query = parseInput(EventsQuery, request.query, 'events query');
    const cursor = parseLastEventId(request.headers['last-event-id']);
    const plan = await planOperationStream(deps, query.operation, cursor);
    await serveStream(reply, deps, (sink) =>
      streamOperation(deps.journal, sink, { ...plan, follow: query.follow ?? false }),
    );
  });
  app.get(AgentRoutes.logs, async (request, reply) => {
    const query = parseInput(LogsQuery, request.query, 'logs query');
    await serveStream(reply, deps, (sink) =>
      streamLogs(deps.journal, sink, { follow: query.follow ?? false, tail: query.tail }),
    );
  });
  return app;
}

function submitRequest(
  kind: (typeof submitKinds)[number],
  raw: unknown,
  identity: Identity,
): SubmitRequest {
  switch (kind) {
    case 'upgrade':
      return { kind, identity, body: parseInput(UpgradeRequestBody, raw, 'upgrade request') };
    case 'rollback':
      return { kind, identity, body: parseInput(RollbackRequestBody, raw, 'rollback request') };
    case 'reboot':
      return { kind, identity, body: parseInput(RebootRequestBody, raw, 'reboot request') };
  }
}

/**
 * Hand the socket to an SSE writer. Errors after the 200 went out cannot change the status, so
 * they end the stream with an `event: stream-error` frame instead.
 */
async function serveStream(
  reply: FastifyReply,
  deps: AgentAppDeps,
  run: (sink: SseSink) => Promise<void>,
): Promise<void> {
  reply.hijack();
  const sink = openSse(reply.raw);
  try {
    await run(sink);
  } catch (e) {
    const answer = errorAnswer(e);
    if (answer.status === 500) deps.onInternalError?.(e);
    await sink.error(answer.body);
  } finally {
    sink.end();
  }
}
