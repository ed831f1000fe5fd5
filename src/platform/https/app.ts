// SPDX-License-Identifier: Apache-2.0
/**
 * The Fastify instance a molt API's routes go on: no logger, small bodies, event streams cut on
 * close, and every error (a throw, a framework client error, an unknown route) answered as an
 * `ErrorBody`. Routes and who may call them stay the daemon's business.
 */
import Fastify, {
  type FastifyInstance,
  type FastifyServerFactory,
  type FastifyServerOptions,
} from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ErrorAnswerer } from './errors.ts';

/** Options of {@link createApiApp}. */
export interface ApiAppOptions {
  /** The daemon, as refusals name it: `agent`, `operator`. */
  readonly name: string;
  readonly errorAnswer: ErrorAnswerer;
  /** Told about every 500 (a bug), since Fastify's logger is off and the body carries no stack. */
  readonly onInternalError?: ((error: unknown) => void) | undefined;
  /** Creates the HTTPS server; omitted in `inject()` tests. */
  readonly serverFactory?: FastifyServerFactory | undefined;
}

/**
 * Routes validate with zod and reply with plain JSON, so Fastify's JSON-schema compilers are never
 * used; without these factories Fastify loads its defaults anyway when the instance is built — Ajv
 * (three copies), ajv-formats and fast-json-stringify, 3–5 MB of the idle agent's RSS (benchmark
 * P6). A route given a schema fails at `listen()` rather than load them.
 */
function noJsonSchemas(name: string): NonNullable<FastifyServerOptions['schemaController']> {
  const refuse = (): never => {
    throw new MoltError(ErrorCode.Internal, `${name} routes validate with zod, not JSON schemas`);
  };
  return { compilersFactory: { buildValidator: refuse, buildSerializer: refuse } };
}

/** A Fastify instance with molt's error answers and no routes yet (not listening). */
export function createApiApp(o: ApiAppOptions): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: 64 * 1024,
    // Open event streams must not keep close() waiting: a reboot or an operator restart closes
    // the API mid-stream, and followers reconnect with Last-Event-ID.
    forceCloseConnections: true,
    schemaController: noJsonSchemas(o.name),
    ...(o.serverFactory && { serverFactory: o.serverFactory }),
  });
  app.setErrorHandler(async (error, _request, reply) => {
    const answer = o.errorAnswer(error);
    if (answer.status === 500) o.onInternalError?.(error);
    return reply.code(answer.status).send(answer.body);
  });
  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({
      code: ErrorCode.BadInput,
      message: `the ${o.name} has no route ${request.method} ${request.url}`,
    }),
  );
  return app;
}
