// SPDX-License-Identifier: Apache-2.0
/**
 * The per-peer admission of admission.ts on a listener's sockets, with Node's own events: a socket
 * is pending from `connection` to `secureConnection` (plain HTTP: to its first request), then its
 * peer is the identity of the client certificate TLS verified (`getPeerCertificate()`), or its
 * `remoteAddress`. A connection refused at a cap is not cut at once — a client would take a close
 * right after the handshake for a refused certificate (MOLT_TLS_REJECTED) — but stays pending
 * (evictable, under the header deadline) until its first request, which is answered 429 or 503
 * `MOLT_CONNECTION_LIMIT` with `connection: close`.
 */
import type { RequestListener, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Server as NetServer, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Role } from '../../protocol/agent.ts';
import { addressPeer, type Peer, type PeerBook, type Refusal, type Verdict } from './admission.ts';
import { identityFromSubject } from './identity.ts';

/** Where a connection stands: served for `peer`, or refused. */
type Place =
  | { readonly peer: Peer; readonly book: PeerBook }
  | { readonly peer?: undefined; readonly refusal: Refusal };

/** Each connection's place, by the socket its requests come on (TLS: the TLSSocket). */
const places = new WeakMap<object, Place>();

/** The peer of a TLS connection: its verified client certificate, else its address. */
export function tlsPeer(socket: TLSSocket): Peer {
  const cert = socket.authorized ? socket.getPeerCertificate() : undefined;
  if (cert?.fingerprint256 === undefined) return addressPeer(socket.remoteAddress);
  try {
    const who = identityFromSubject(cert.subject, 'this listener');
    return {
      key: `cert:${who.role}:${who.name}`,
      label: `${who.name} (role ${who.role})`,
      certified: true,
      reserved: who.role === Role.Operator,
    };
  } catch {
    // A certificate of another CA's scheme (the Cluster API's client): counted by its fingerprint.
    const cn = cert.subject.CN;
    const label = `the certificate ${typeof cn === 'string' ? cn : cert.fingerprint256}`;
    return { key: `cert:${cert.fingerprint256}`, label, certified: true, reserved: false };
  }
}

/** The place of `socket` decided: refused, or served (freed when the socket closes). */
function place(socket: Socket, peer: Peer, book: PeerBook): Place {
  const verdict = book.admit(peer);
  const decided: Place = verdict.granted ? { peer, book } : { refusal: verdict.refusal };
  if (verdict.granted) socket.once('close', verdict.release);
  places.set(socket, decided);
  return decided;
}

/** `local|remote` of a connection: the same on the raw socket and on the TLSSocket over it. */
const connectionId = (s: Socket): string =>
  `${String(s.localAddress)}:${String(s.localPort)}|${String(s.remoteAddress)}:${String(s.remotePort)}`;

/** Count `server`'s sockets as pending from accept until `done` says they are through. */
function watchPending(server: NetServer, book: PeerBook, raws?: Map<string, Socket>): void {
  server.on('connection', (socket: Socket) => {
    if (socket.remoteAddress === undefined) {
      socket.destroy();
      return;
    }
    const id = connectionId(socket);
    book.arrive(socket, socket.remoteAddress);
    raws?.set(id, socket);
    socket.once('close', () => {
      book.settle(socket);
      if (raws?.get(id) === socket) raws.delete(id);
    });
  });
}

/** Admit a TLS listener's connections at the end of their handshake, by client certificate. */
export function admitTls(server: HttpsServer, book: PeerBook): void {
  // The raw socket a TLSSocket wraps, to settle it: Node links them by no public property.
  const raws = new Map<string, Socket>();
  watchPending(server, book, raws);
  server.on('secureConnection', (socket: TLSSocket) => {
    const id = connectionId(socket);
    const decided = place(socket, tlsPeer(socket), book);
    if (decided.peer === undefined) return;
    const raw = raws.get(id);
    raws.delete(id);
    if (raw !== undefined) book.settle(raw);
  });
}

/** Admit a plain HTTP listener's connections at their first request, by address. */
export function admitPlain(server: NetServer, book: PeerBook): void {
  watchPending(server, book);
}

function refuse(res: ServerResponse, refusal: Refusal): void {
  res.writeHead(refusal.status, {
    'content-type': 'application/json; charset=utf-8',
    'retry-after': '1',
    connection: 'close',
  });
  res.end(JSON.stringify(refusal.body));
}

/**
 * `handler` behind the admission: a connection's first request places it (plain HTTP; TLS ones
 * are placed at the handshake), and every request of a refused connection gets its refusal.
 */
export function admitting(handler: RequestListener, book: PeerBook): RequestListener {
  return (req, res) => {
    const socket = req.socket;
    let decided = places.get(socket);
    if (decided === undefined) {
      decided = place(socket, addressPeer(socket.remoteAddress), book);
      if (decided.peer !== undefined) book.settle(socket);
    }
    if (decided.peer === undefined) refuse(res, decided.refusal);
    else handler(req, res);
  };
}

/**
 * A place for an event stream on the connection of `socket`, within its peer's streams; a socket
 * of no limited listener (an `inject()` test) always gets one.
 */
export function holdStream(socket: object): Verdict {
  const decided = places.get(socket);
  if (decided?.peer === undefined) return { granted: true, release: () => undefined };
  return decided.book.openStream(decided.peer);
}
