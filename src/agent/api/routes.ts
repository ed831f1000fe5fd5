// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's routes (docs/adr/0004 §6) on a Fastify instance: who may call what, request
 * validation, and the journal-backed event streams. Transport (TLS) is the caller's business, so
 * tests drive the same routes with `inject()` and an injected identity.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerFactory } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { createApiApp } from '../../platform/https/app.ts';
import { requirePermission, type Identity } from '../../platform/https/identity.ts';
import { parseInput } from '../../platform/https/input.ts';
import { serveSse } from '../../platform/https/sse.ts';
import {
  AgentRoutes,
  CancelRequestBody,
  RebootRequestBody,
  RolePermissions,
  RollbackRequestBody,
  UpgradeRequestBody,
  type AgentPermission,
} from '../../protocol/agent.ts';
import { AgentHoldRequestBody, AgentReleaseRequestBody } from '../../protocol/agent-hold.ts';
import type { PinnedImages } from '../machine/pinned-images.ts';
import type { JournalStore } from '../ports/journal-store.ts';
import type { AgentService, ApiOperationRequest } from './service.ts';
import {
  authoriseDrain,
  defaultForceDeleteGrant,
  type ForceDeleteGrant,
} from './drain-permission.ts';
import { errorAnswer } from './errors.ts';
import { registerImageRoutes } from './image-routes.ts';
import { registerKubernetesRoutes, type KubernetesService } from './kubernetes-routes.ts';
import { registerRecoveryRoutes, type RecoveryDeps } from './recovery-routes.ts';
import { openEventSse, type SseSink } from './sse.ts';
import { planOperationStream, streamLogs, streamOperation } from './streams.ts';
import { EventsQuery, LogsQuery, parseLastEventId } from './validation.ts';

/** What the routes need. */
export interface AgentAppDeps {
  readonly service: AgentService;
  readonly journal: JournalStore;
  /** The caller of a request: in production the verified peer certificate (`mtlsIdentity`). */
  readonly identify: (request: FastifyRequest) => Identity;
  /** Told about every 500 (a bug), since Fastify's logger is off and the body carries no stack. */
  readonly onInternalError?: (error: unknown) => void;
  /** Who may ask for force-delete drains (the machine config's). @default admin only */
  readonly forceDelete?: ForceDeleteGrant | undefined;
  /** The machine's control-plane components; absent on machines that render none. */
  readonly kubernetes?: KubernetesService | undefined;
  /** Services and etcd for recovery with Kubernetes down (docs/adr/0012 §6). @default none */
  readonly recovery?: RecoveryDeps | undefined;
  /** The images a Kubernetes node keeps pinned; absent on machines without a node runtime. */
  readonly pinnedImages?: PinnedImages | undefined;
}

/** Options of {@link buildAgentApp}. */
export interface AgentAppOptions {
  /** Creates the HTTPS server; omitted in `inject()` tests. */
  readonly serverFactory?: FastifyServerFactory;
}

const submitKinds = ['upgrade', 'rollback', 'reboot'] as const;

/** A Fastify instance serving the agent API (not yet listening). */
export function buildAgentApp(deps: AgentAppDeps, options: AgentAppOptions = {}): FastifyInstance {
  // No JSON-schema compilers (they would cost the idle agent 3–5 MB, benchmark P6): see app.ts.
  const app = createApiApp({
    name: 'agent',
    errorAnswer,
    onInternalError: deps.onInternalError,
    serverFactory: options.serverFactory,
  });
  const identities = new WeakMap<FastifyRequest, Identity>();
  app.addHook('onRequest', async (request) => {
    const identity = deps.identify(request);
    identities.set(request, identity);
    // Only reads are open to every role: a method added later is guarded before it is thought of.
    const reads = request.method === 'GET' || request.method === 'HEAD';
    const permission: AgentPermission = reads ? 'read' : 'operate';
    requirePermission(
      identity,
      permission,
      permission === 'operate' ? `call ${request.url}` : `read ${request.url}`,
      RolePermissions,
    );
    await Promise.resolve();
  });
  const who = (request: FastifyRequest): Identity => {
    const identity = identities.get(request);
    if (identity === undefined) throw new MoltError(ErrorCode.Internal, 'request without identity');
    return identity;
  };

  app.get(AgentRoutes.status, () => deps.service.status());
  app.get(AgentRoutes.operations, () => deps.journal.operations());
  for (const kind of submitKinds) {
    app.post(AgentRoutes[kind], async (request, reply) => {
      const submit = submitRequest(kind, request.body ?? {}, who(request));
      if (submit.body.force)
        requirePermission(submit.identity, 'force', `${kind} with force`, RolePermissions);
      if (submit.kind === 'upgrade')
        authoriseDrain(
          submit.body.drain,
          submit.identity,
          deps.forceDelete ?? defaultForceDeleteGrant,
        );
      return reply.code(202).send(await deps.service.submit(submit));
    });
  }
  // POST, DELETE: the onRequest hook above lets operator and admin certificates through, never node.
  app.get(AgentRoutes.hold, () => deps.service.hold());
  app.post(AgentRoutes.hold, async (request) =>
    deps.service.setHold(
      parseInput(AgentHoldRequestBody, request.body ?? {}, 'hold request'),
      who(request),
    ),
  );
  app.delete(AgentRoutes.hold, async (request) => {
    parseInput(AgentReleaseRequestBody, request.body ?? {}, 'release request');
    return deps.service.clearHold(who(request));
  });
  app.post(AgentRoutes.cancel, async (request, reply) => {
    const body = parseInput(CancelRequestBody, request.body ?? {}, 'cancel request');
    return reply.code(202).send(await deps.service.cancel(who(request), body.operation));
  });
  app.get(AgentRoutes.events, async (request, reply) => {
    const query = parseInput(EventsQuery, request.query, 'events query');
    const cursor = parseLastEventId(request.headers['last-event-id']);
    const plan = await planOperationStream(deps, query.operation, cursor);
    await serveStream(reply, deps, (sink) =>
      streamOperation(deps.journal, sink, { ...plan, follow: query.follow ?? false }),
    );
  });
  registerKubernetesRoutes(app, deps.kubernetes);
  registerImageRoutes(app, deps.pinnedImages);
  app.get(AgentRoutes.logs, async (request, reply) => {
    const query = parseInput(LogsQuery, request.query, 'logs query');
    await serveStream(reply, deps, (sink) =>
      streamLogs(deps.journal, sink, { follow: query.follow ?? false, tail: query.tail }),
    );
  });
  registerRecoveryRoutes(app, { recovery: deps.recovery ?? {}, service: deps.service, who });
  return app;
}

function submitRequest(
  kind: (typeof submitKinds)[number],
  raw: unknown,
  identity: Identity,
): ApiOperationRequest {
  switch (kind) {
    case 'upgrade':
      return { kind, identity, body: parseInput(UpgradeRequestBody, raw, 'upgrade request') };
    case 'rollback':
      return { kind, identity, body: parseInput(RollbackRequestBody, raw, 'rollback request') };
    case 'reboot':
      return { kind, identity, body: parseInput(RebootRequestBody, raw, 'reboot request') };
  }
}

/** Serve one journal stream; a failure after the 200 ends it with a `stream-error` frame. */
function serveStream(
  reply: FastifyReply,
  deps: AgentAppDeps,
  run: (sink: SseSink) => Promise<void>,
): Promise<void> {
  return serveSse(reply, openEventSse, run, {
    errorAnswer,
    onInternalError: deps.onInternalError,
  });
}
