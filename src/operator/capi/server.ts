// SPDX-License-Identifier: Apache-2.0
/**
 * molt's Cluster API runtime extension on a listener of its own: CAPI's core and KCP
 * controllers POST hook requests to it over HTTPS (TLS from the same kind of files as the operator
 * API's `serverCert`/`serverKey`). Only CAPI may call: every caller presents a client certificate
 * that `clientCa` signed (CAPI's `--runtime-extension-client-cert-file`), checked in the TLS
 * handshake — a caller without one never reaches a hook; with `clientNames`, only those of its
 * certificates that name one of them (else 403). Without `clientCa` the listener refuses
 * to start (`MOLT_CAPI_CLIENT_AUTH_REQUIRED`) unless told `insecureNoClientAuth`. Routes, as CAPI builds them from the ExtensionConfig
 * URL: `POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery` and
 * `POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/<hook lowercased>/<handler>`.
 *
 * Errors, in CAPI's shape: CAPI sends no Content-Type, so none is required and the body is read as
 * JSON whatever it says. A body that is not JSON or not the hook's schema gets HTTP 200 and a
 * `Failure` naming the field — as upstream's SDK server answers, so CAPI decodes it and logs molt's
 * message (any non-200 is an error to CAPI too, but it logs only the raw bytes). An unknown hook or
 * handler gets 404, a body over 1 MiB 413, each with `{status: 'Failure', message}`.
 */
import { TLSSocket } from 'node:tls';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerFactory,
} from 'fastify';
import {
  CapiHandlerName,
  CapiHook,
  HookApiVersion,
  hookPath,
  type HookFailure,
} from '../../protocol/capi-hooks.ts';
import { limitedServerFactory, type ListenerLimits } from '../../platform/https/listener.ts';
import { listenUrl, type ListeningApi } from '../../platform/https/server.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { discoveryAnswer, type HookDeps } from './answers.ts';
import { answerHook } from './routes.ts';

/** Request bodies above this are refused (413); a live CanUpdateMachineSetRequest is ≈ 9 KiB. */
export const CapiBodyLimit = 1024 * 1024;

/**
 * A whole request (headers and body) must arrive within this, well below the handlers' 10 s
 * `timeoutSeconds`, so a slow sender is cut before CAPI gives up on the call anyway.
 */
export const CapiRequestTimeoutMs = 5_000;

/** Options of {@link createCapiExtensionServer}. */
export interface CapiExtensionServerOptions {
  readonly deps: HookDeps;
  /**
   * PEM: the serving certificate (for `https://127.0.0.1:PORT`, with IP SAN 127.0.0.1) and key;
   * `clientCa`: the CA every caller's client certificate must chain to.
   */
  readonly tls: {
    readonly cert: string;
    readonly key: string;
    readonly clientCa?: string | undefined;
  };
  /**
   * With `clientCa`: only a client certificate whose subject CN or a DNS SAN is one of these may
   * call. A CA is often shared (a cluster's CA signs every kubelet's and controller's client
   * certificate too), and the CA alone would let each of those call the hooks.
   */
  readonly clientNames?: readonly string[] | undefined;
  /** Serve without `clientCa`: anyone who reaches the port may call the hooks. @default false */
  readonly insecureNoClientAuth?: boolean | undefined;
  /** @default '127.0.0.1' */
  readonly host?: string | undefined;
  /** 0 picks a free port. @default 0 */
  readonly port?: number | undefined;
  readonly limits?: Partial<ListenerLimits> | undefined;
  /** Told about every 500 (a bug in molt). */
  readonly onInternalError?: ((error: unknown) => void) | undefined;
}

/** Start the extension listener; `url` is what the ExtensionConfig's `clientConfig.url` names. */
export async function createCapiExtensionServer(
  o: CapiExtensionServerOptions,
): Promise<ListeningApi> {
  const host = o.host ?? '127.0.0.1';
  if (o.tls.clientCa === undefined && o.insecureNoClientAuth !== true)
    throw new MoltError(
      ErrorCode.CapiClientAuthRequired,
      'the Cluster API extension would take hook calls from anyone: it has no capi.clientCa',
      {
        hint: "set capi.clientCa to the CA of CAPI's --runtime-extension-client-cert-file (or capi.insecureNoClientAuth: true, only on a network nobody else reaches)",
      },
    );
  const mtls =
    o.tls.clientCa === undefined
      ? {}
      : { ca: o.tls.clientCa, requestCert: true, rejectUnauthorized: true };
  if (o.clientNames !== undefined && o.tls.clientCa === undefined)
    throw new MoltError(
      ErrorCode.CapiClientAuthRequired,
      'capi.clientNames needs capi.clientCa: without a CA no client certificate is asked for',
    );
  const app = buildCapiApp(
    o,
    limitedServerFactory(
      { cert: o.tls.cert, key: o.tls.key, ...mtls },
      { requestTimeoutMs: CapiRequestTimeoutMs, ...o.limits },
    ),
  );
  await app.listen({ host, port: o.port ?? 0 });
  return { url: listenUrl(app, host, 'https'), close: () => app.close() };
}

/** The Fastify app of the extension (not listening). */
export function buildCapiApp(
  o: Pick<CapiExtensionServerOptions, 'deps' | 'onInternalError' | 'clientNames'>,
  serverFactory?: FastifyServerFactory,
): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: CapiBodyLimit,
    forceCloseConnections: true,
    ...(serverFactory && { serverFactory }),
  });
  // Whatever the Content-Type (CAPI sends none), the body is text for the hook to parse.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    done(null, body);
  });
  app.setErrorHandler(async (error: { statusCode?: number; message?: string }, _req, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) o.onInternalError?.(error);
    const message =
      status === 413
        ? `the request body is over ${String(CapiBodyLimit)} bytes`
        : status >= 500
          ? 'molt hit an unexpected error (a bug); the operator log has the details'
          : (error.message ?? 'bad request');
    return failure(reply, status, message);
  });
  app.setNotFoundHandler(async (request, reply) =>
    failure(
      reply,
      404,
      `molt serves no hook at ${request.method} ${request.url.split('?')[0] ?? ''}`,
    ),
  );
  const allowed = o.clientNames === undefined ? undefined : new Set(o.clientNames);
  if (allowed !== undefined)
    app.addHook('onRequest', async (request, reply) => {
      const socket = request.raw.socket;
      const names = socket instanceof TLSSocket ? certificateNames(socket) : [];
      if (names.some((n) => allowed.has(n))) return;
      await failure(
        reply,
        403,
        `MOLT_FORBIDDEN: the client certificate (${names.join(', ') || 'no names'}) is none of capi.clientNames`,
      );
    });
  app.post(hookPath('Discovery'), () => Promise.resolve(discoveryAnswer()));
  app.post<{ Params: { hook: string; handler: string } }>(
    `/${HookApiVersion}/:hook/:handler`,
    async (request, reply) => {
      const hook = Object.values(CapiHook).find((h) => h.toLowerCase() === request.params.hook);
      if (hook === undefined || CapiHandlerName[hook] !== request.params.handler)
        return failure(
          reply,
          404,
          `molt has no handler ${request.params.handler} for hook ${request.params.hook}`,
        );
      return answerHook(hook, typeof request.body === 'string' ? request.body : '', o.deps);
    },
  );
  return app;
}

/** A verified peer certificate's subject CN and DNS SANs. */
function certificateNames(socket: TLSSocket): string[] {
  const cert = socket.authorized ? socket.getPeerCertificate() : undefined;
  if (cert === undefined) return [];
  const cn = cert.subject.CN;
  const dns = (cert.subjectaltname ?? '')
    .split(', ')
    .filter((n) => n.startsWith('DNS:'))
    .map((n) => n.slice(4));
  return [...(typeof cn === 'string' ? [cn] : []), ...dns];
}

async function failure(
  reply: FastifyReply,
  status: number,
  message: string,
): Promise<FastifyReply> {
  const body: HookFailure = { status: 'Failure', message };
  return reply.code(status).send(body);
}
