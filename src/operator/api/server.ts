// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's HTTPS API with mutual TLS only (docs/adr/0005 §5, as the agent's: docs/adr/0004
 * §6): a peer without a certificate from the fleet CA, or with an expired one, fails the handshake
 * and never reaches a route. The server certificate is one `molt pki issue --role node` makes (a
 * node certificate is the one kind that is also a TLS server certificate); the operator's own
 * `pki.cert` stays its client identity toward the agents.
 */
import { createServer } from 'node:https';
import { TLSSocket } from 'node:tls';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { buildOperatorApp } from './app.ts';
import type { OperatorApiDeps } from './context.ts';
import { peerIdentity } from './identity.ts';

/** PEM material: the fleet CA (trusted for clients) and the server's certificate and key. */
export interface OperatorServerTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** Options of {@link createOperatorApi}. */
export interface OperatorApiOptions {
  readonly deps: OperatorApiDeps;
  readonly tls: OperatorServerTls;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** 0 picks a free port. @default 0 */
  readonly port?: number;
}

/** A listening operator API. */
export interface OperatorApi {
  /** `https://host:port`, with the port actually bound. */
  readonly url: string;
  /** Stop listening and cut open event streams (followers reconnect). */
  close(): Promise<void>;
}

/** Start the API; resolves once it listens. */
export async function createOperatorApi(o: OperatorApiOptions): Promise<OperatorApi> {
  const host = o.host ?? '127.0.0.1';
  const tlsOptions = {
    ...o.tls,
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2' as const,
  };
  const app = await buildOperatorApp(o.deps, {
    identify: (request) => {
      const socket = request.raw.socket;
      if (!(socket instanceof TLSSocket))
        throw new MoltError(ErrorCode.TlsRejected, 'the request did not come over TLS');
      return peerIdentity(socket);
    },
    serverFactory: (handler) => createServer(tlsOptions, handler),
  });
  await app.listen({ host, port: o.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (o.port ?? 0);
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return { url: `https://${hostPart}:${String(port)}`, close: () => app.close() };
}
