// SPDX-License-Identifier: Apache-2.0
/**
 * The limits every molt listener holds, in one place (docs/adr/0004 §6, 0005 §5): a TLS
 * handshake, request headers and a whole request each have a deadline, a connection idle in both
 * directions is dropped, peers are admitted per peer (admission.ts: sockets still in the handshake
 * have a budget of their own, established connections and event streams are capped per client
 * certificate or address, the operator role is always served), and closing the server ends every
 * socket at once — those still in the TLS handshake included, which Node's `closeAllConnections()`
 * does not see. Without this, one TCP connection that never says hello held `close()` — and so
 * every agent reboot — for Node's 120 s handshake default.
 *
 * Event streams are long-lived by design: their requests are complete once the headers are in
 * (so the header and request deadlines never apply to them), their 15 s keep-alive comments keep
 * the idle timer from firing while the follower reads, and the caps refuse new connections and
 * streams, never cut open ones. `close()` ends them at once and followers reconnect with
 * Last-Event-ID.
 */
import { Server as HttpServer, type RequestListener } from 'node:http';
import { Server as HttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import type { Socket } from 'node:net';
import type { FastifyServerFactory } from 'fastify';
import { PeerBook, type AdmissionLimits } from './admission.ts';
import { admitPlain, admitTls, admitting } from './places.ts';

/** How long a peer may take at each stage, and how many may be connected; see {@link defaultListenerLimits}. */
export interface ListenerLimits extends AdmissionLimits {
  /** From TCP accept to a finished TLS handshake (TLS listeners only). */
  readonly handshakeTimeoutMs: number;
  /**
   * From a request's first byte (or, on a new connection, from accept or the end of the TLS
   * handshake) to the end of its headers: a silent or slow client gets 408 and is cut.
   */
  readonly headersTimeoutMs: number;
  /** From a request's first byte to the end of its body (bodies are at most 64 KiB). */
  readonly requestTimeoutMs: number;
  /** How long a kept-alive connection may wait for its next request. */
  readonly keepAliveTimeoutMs: number;
  /**
   * No byte either way for this long ends the connection: a peer that stops reading an answer, or
   * a request that is never answered. Well past the event streams' 15 s keep-alive comment.
   */
  readonly idleTimeoutMs: number;
}

/**
 * The defaults: generous for a machine on a slow management network (a handshake and headers take
 * milliseconds there), tight next to Node's own (120 s handshake, 60 s headers, no cap, no idle
 * limit). Listeners set their own caps (the agent's are smaller: only the operator and a few
 * people's CLIs connect to it). A pending socket at a pending cap does not refuse the new one but
 * evicts the oldest (admission.ts), so those caps bound memory, not who gets served.
 */
export const defaultListenerLimits: ListenerLimits = {
  handshakeTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 60_000,
  maxPending: 128,
  maxPendingPerAddress: 32,
  maxConnections: 256,
  maxConnectionsPerPeer: 32,
  maxStreamsPerPeer: 8,
};

/** The defaults overridden by `limits`; Node refuses a header deadline past the request's. */
export function resolveLimits(limits: Partial<ListenerLimits> = {}): ListenerLimits {
  const l = { ...defaultListenerLimits, ...limits };
  return { ...l, headersTimeoutMs: Math.min(l.headersTimeoutMs, l.requestTimeoutMs) };
}

/**
 * An HTTPS server whose `closeAllConnections()` (what Fastify's `forceCloseConnections` calls on
 * close, just before `server.close()`) also destroys raw sockets still in the TLS handshake: http's
 * connection list only gets a socket once its handshake is done, and `server.close()` waits for
 * every socket.
 */
class HandshakeAwareServer extends HttpsServer {
  readonly #sockets = new Set<Socket>();

  constructor(options: HttpsServerOptions, handler: RequestListener) {
    super(options, handler);
    this.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  override closeAllConnections(): void {
    super.closeAllConnections();
    for (const socket of this.#sockets) socket.destroy();
  }
}

/** The TLS material of a listener: a server certificate and key, and for mutual TLS the client CA. */
export type ListenerTls = Pick<
  HttpsServerOptions,
  'ca' | 'cert' | 'key' | 'requestCert' | 'rejectUnauthorized'
>;

/**
 * Fastify's `serverFactory` for a listener under `limits`: HTTPS (TLS 1.2 or newer) with `tls`,
 * plain HTTP without. Use it with `forceCloseConnections: true` (`createApiApp` sets it).
 */
export function limitedServerFactory(
  tls: ListenerTls | undefined,
  limits: Partial<ListenerLimits> = {},
): FastifyServerFactory {
  const l = resolveLimits(limits);
  // How often Node looks for requests past their header or request deadline (default 30 s,
  // which would let a slow-headers client stay four times its deadline).
  const checkMs = Math.max(50, Math.min(1_000, Math.floor(l.headersTimeoutMs / 2)));
  const http = {
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    keepAliveTimeout: l.keepAliveTimeoutMs,
    connectionsCheckingInterval: checkMs,
  };
  return (handler) => {
    // One book per server: a factory called twice must not share its counts.
    const book = new PeerBook(l);
    const admitted = admitting(handler, book);
    if (tls === undefined) {
      const plain = new HttpServer(http, admitted);
      admitPlain(plain, book);
      plain.setTimeout(l.idleTimeoutMs);
      return plain;
    }
    const server = new HandshakeAwareServer(
      { ...tls, ...http, minVersion: 'TLSv1.2', handshakeTimeout: l.handshakeTimeoutMs },
      admitted,
    );
    admitTls(server, book);
    server.setTimeout(l.idleTimeoutMs);
    return server;
  };
}
