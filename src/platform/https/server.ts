// SPDX-License-Identifier: Apache-2.0
/**
 * An API over HTTPS with mutual TLS only (docs/adr/0004 §6, docs/adr/0005 §5): a peer without a
 * certificate from the fleet CA, or with an expired one, fails the handshake and never reaches a
 * route. The daemon builds its Fastify app around the server factory given here.
 */
import { TLSSocket } from 'node:tls';
import type { FastifyInstance, FastifyRequest, FastifyServerFactory } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { peerIdentity, type Identity } from './identity.ts';
import { limitedServerFactory, type ListenerLimits } from './listener.ts';

/** PEM material: the fleet CA (trusted for clients) and the server's own certificate and key. */
export interface ServerTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** Where and as whom an mTLS API listens; each daemon's API options extend this. */
export interface MtlsEndpoint {
  /** PEM: the fleet CA (trusted for clients) and the server's own certificate and key. */
  readonly tls: ServerTls;
  /** @default '127.0.0.1' */
  readonly host?: string | undefined;
  /** 0 picks a free port. @default 0 */
  readonly port?: number | undefined;
  /** Deadlines and the connection cap (listener.ts). @default defaultListenerLimits */
  readonly limits?: Partial<ListenerLimits> | undefined;
}

/** Options of {@link listenMtls}. */
export interface MtlsListenOptions extends MtlsEndpoint {
  /** The app, not yet listening, on a server `serverFactory` creates. */
  readonly build: (
    serverFactory: FastifyServerFactory,
  ) => FastifyInstance | Promise<FastifyInstance>;
}

/** A listening API. */
export interface ListeningApi {
  /** `https://host:port`, with the port actually bound. */
  readonly url: string;
  /**
   * Stop listening and end every connection at once: open event streams (followers reconnect),
   * idle keep-alive connections and sockets still in the TLS handshake.
   */
  close(): Promise<void>;
}

/** The caller of a request over mutual TLS; `server` names the API in refusals ("this agent"). */
export function mtlsIdentity(server: string): (request: FastifyRequest) => Identity {
  return (request) => {
    const socket = request.raw.socket;
    if (!(socket instanceof TLSSocket))
      throw new MoltError(ErrorCode.TlsRejected, 'the request did not come over TLS');
    return peerIdentity(socket, server);
  };
}

/** `scheme://host:port` of a listening app, with the port actually bound (IPv6 hosts bracketed). */
export function listenUrl(
  app: { readonly server: { address(): unknown } },
  host: string,
  scheme: 'http' | 'https',
): string {
  const address = app.server.address() as { port?: number } | string | null;
  const port = typeof address === 'object' && address !== null ? (address.port ?? 0) : 0;
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${String(port)}`;
}

/** Build the app on an mTLS server under the listener limits and listen; resolves once it listens. */
export async function listenMtls(o: MtlsListenOptions): Promise<ListeningApi> {
  const host = o.host ?? '127.0.0.1';
  const tls = { ...o.tls, requestCert: true, rejectUnauthorized: true };
  const app = await o.build(limitedServerFactory(tls, o.limits));
  await app.listen({ host, port: o.port ?? 0 });
  return { url: listenUrl(app, host, 'https'), close: () => app.close() };
}
