// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's HTTP API (docs/adr/0005 §5) on a Fastify instance: who may call what, the error
 * shape, and every route, FleetLock included. Transport (mutual TLS) is `server.ts`'s business,
 * so tests drive the same routes with `inject()` and an injected identity.
 *
 * Roles (certificate `O=molt:<role>`): any fleet identity reads (GET); writes (POST) need
 * operator or admin, and `force` needs admin. FleetLock is the exception: its callers are the
 * machines themselves (Zincati on a node, with a node certificate), so any fleet identity may
 * call it — for its own id only, an admin for any (`fleetlock-callers.ts`).
 */
import type { FastifyInstance, FastifyRequest, FastifyServerFactory } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { createApiApp } from '../../platform/https/app.ts';
import { requirePermission, type Identity } from '../../platform/https/identity.ts';
import { OperatorRolePermissions, OperatorRoutes } from '../../protocol/operator.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import { errorAnswer } from './errors.ts';
import { registerFleetLock } from './fleetlock.ts';
import { certificateBinding } from './fleetlock-callers.ts';
import { historyRoutes } from './routes-history.ts';
import { machineRoutes } from './routes-machines.ts';
import { planRoutes } from './routes-plan.ts';
import { releaseRoutes } from './routes-releases.ts';
import { rolloutRoutes } from './routes-rollouts.ts';
import { kubernetesRoutes } from './routes-kubernetes.ts';
import { imageRoutes } from './routes-images.ts';

/** Options of {@link buildOperatorApp}. */
export interface OperatorAppOptions {
  /** The caller of a request: in production the verified peer certificate (`mtlsIdentity`). */
  readonly identify: (request: FastifyRequest) => Identity;
  /** Creates the HTTPS server; omitted in `inject()` tests. */
  readonly serverFactory?: FastifyServerFactory;
}

const isFleetLock = (url: string): boolean =>
  url === OperatorRoutes.fleetLock || url.startsWith(`${OperatorRoutes.fleetLock}/`);

/** A node's registration needs `register-self` (the route checks it is itself, as its rules allow). */
const isRegistration = (request: FastifyRequest): boolean =>
  request.method === 'POST' && request.url === OperatorRoutes.machines;

function authorise(request: FastifyRequest, identity: Identity): void {
  if (request.method === 'GET' || request.method === 'HEAD' || isFleetLock(request.url)) return;
  requirePermission(
    identity,
    isRegistration(request) && identity.role === 'node' ? 'register-self' : 'write',
    `call ${request.method} ${request.url}`,
    OperatorRolePermissions,
  );
}

/** A Fastify instance serving the operator API (not yet listening). */
export async function buildOperatorApp(
  deps: OperatorApiDeps,
  options: OperatorAppOptions,
): Promise<FastifyInstance> {
  // Routes validate with zod: Fastify's Ajv compilers are never needed, so never loaded (app.ts).
  const app = createApiApp({
    name: 'operator',
    errorAnswer,
    onInternalError: deps.onInternalError,
    serverFactory: options.serverFactory,
  });
  const identities = new WeakMap<FastifyRequest, Identity>();
  // Refusals are answered here rather than thrown: a throw inside FleetLock's encapsulated scope
  // would reach FleetLock's error handler, which answers anything unknown as a 500.
  app.addHook('onRequest', async (request, reply) => {
    try {
      const identity = options.identify(request);
      authorise(request, identity);
      identities.set(request, identity);
    } catch (e) {
      const answer = errorAnswer(e);
      return reply.code(answer.status).send(answer.body);
    }
    return undefined;
  });
  const context: RouteContext = {
    deps,
    who: (request) => {
      const identity = identities.get(request);
      if (identity === undefined)
        throw new MoltError(ErrorCode.Internal, 'request without identity');
      return identity;
    },
  };
  rolloutRoutes(app, context);
  machineRoutes(app, context);
  historyRoutes(app, context);
  planRoutes(app, context);
  releaseRoutes(app, context);
  kubernetesRoutes(app, context, deps.kubernetes);
  imageRoutes(app, deps.images, { isLeader: deps.isLeader, store: deps.store });
  await registerFleetLock(app, {
    store: deps.fleetLock.store,
    groups: deps.fleetLock.groups,
    now: deps.now,
    prefix: OperatorRoutes.fleetLock,
    bind: certificateBinding(context.who, async () => (await deps.store.read()).machines),
    ...(deps.onInternalError && { onInternalError: deps.onInternalError }),
    ...(deps.fleetLock.onRecovered && { onRecovered: deps.fleetLock.onRecovered }),
  });
  return app;
}
