// SPDX-License-Identifier: Apache-2.0
/**
 * Slow and silent peers for the listener limits (tests only): a TCP connection that never
 * says hello, a client that sends its headers a line at a time and never ends them, and the
 * bounded checks every listener runs with them ({@link itHoldsSlowPeers}). The bounds are far
 * below Node's defaults (120 s handshake, 60 s headers checked every 30 s) and far above what the
 * limits need, so a busy machine does not make them flaky.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect as connectTcp, type Socket } from 'node:net';
import { it } from 'node:test';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { Client } from 'undici';
import type { ListenerLimits } from '../platform/https/listener.ts';

/** A listener as the tests see it. */
export interface ListenerUnderTest {
  readonly url: string;
  close(): Promise<void>;
}

/** Limits small enough for a test to watch them act. */
export const testLimits: Partial<ListenerLimits> = {
  handshakeTimeoutMs: 400,
  headersTimeoutMs: 400,
  requestTimeoutMs: 800,
  keepAliveTimeoutMs: 400,
  idleTimeoutMs: 800,
};

/** What "at once" or "after a test limit" may take at most. */
export const promptlyMs = 5_000;

function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) };
}

/** A TCP connection that never sends a byte, once connected. */
export async function silentSocket(url: string): Promise<Socket> {
  const socket = connectTcp(hostPort(url));
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  // Read (and drop) what comes: a socket nobody reads from never sees the server hang up.
  socket.resume();
  return socket;
}

/** 'closed' once `socket` closed, 'open' if it still is after `ms`. */
export function closedWithin(socket: Socket, ms: number): Promise<'closed' | 'open'> {
  if (socket.closed) return Promise.resolve('closed');
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      resolve('open');
    }, ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
  });
}

/** True if `promise` settles within `ms`. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  const settled = promise.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, late]).finally(() => {
    clearTimeout(timer);
  });
}

/** A connected socket to `url`: TLS (handshake done) when `tls` is given, else plain TCP. */
export async function openSocket(url: string, tls: ConnectionOptions | undefined): Promise<Socket> {
  if (tls === undefined) return silentSocket(url);
  const socket = connectTls({ ...hostPort(url), ...tls });
  socket.on('error', () => undefined);
  await once(socket, 'secureConnect');
  return socket;
}

/**
 * Send a request line and then one header line every 100 ms, never ending the headers (slowloris).
 * Resolves with what the server wrote before cutting the connection, or undefined if it is still
 * open after `ms`.
 */
export async function slowHeaders(
  url: string,
  tls: ConnectionOptions | undefined,
  ms: number,
): Promise<string | undefined> {
  const socket = await openSocket(url, tls);
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  socket.write(`GET / HTTP/1.1\r\nhost: ${new URL(url).host}\r\n`);
  let n = 0;
  const drip = setInterval(() => {
    if (!socket.destroyed) socket.write(`x-slow-${String(n++)}: 1\r\n`);
  }, 100);
  const verdict = await closedWithin(socket, ms);
  clearInterval(drip);
  socket.destroy();
  return verdict === 'closed' ? answer : undefined;
}

/** Send one GET on an open socket; resolves with the status line of the answer. */
export async function statusLine(socket: Socket, url: string, path: string): Promise<string> {
  let answer = '';
  const got = new Promise<string>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      const end = answer.indexOf('\r\n');
      if (end >= 0) resolve(answer.slice(0, end));
    });
    socket.once('close', () => {
      reject(new Error(`closed before answering; got ${JSON.stringify(answer)}`));
    });
  });
  socket.write(`GET ${path} HTTP/1.1\r\nhost: ${new URL(url).host}\r\n\r\n`);
  return got;
}

/**
 * The bounded slow-connection checks of one listener: `start(limits)` starts it (not shared: the
 * test closes it). `tls` is how a client connects (CA, and a client certificate for mutual TLS);
 * undefined for plain HTTP.
 */
export function itHoldsSlowPeers(
  start: (limits: Partial<ListenerLimits>) => Promise<ListenerUnderTest>,
  tls: ConnectionOptions | undefined,
): void {
  it('closes at once with a TCP connection open that never said hello', async () => {
    // Default limits: close() must not wait for the handshake deadline either.
    const server = await start({});
    const silent = await silentSocket(server.url);
    assert.equal(await settlesWithin(server.close(), promptlyMs), true, 'close() was held');
    assert.equal(await closedWithin(silent, promptlyMs), 'closed');
  });

  it('cuts a client whose headers never end, after the header deadline', async () => {
    const server = await start(testLimits);
    try {
      const answer = await slowHeaders(server.url, tls, promptlyMs);
      assert.notEqual(answer, undefined, 'the slow client was still connected');
      assert.match(answer ?? '', /^$|^HTTP\/1\.1 408/);
    } finally {
      await server.close();
    }
  });

  it('answers a connection past the cap with MOLT_CONNECTION_LIMIT while the open one keeps working', async () => {
    const server = await start({ maxConnections: 1 });
    const clients: Client[] = [];
    try {
      const [held, refused] = [0, 1].map(() => client(server.url, tls)) as [Client, Client];
      clients.push(held, refused);
      assert.ok((await answer(held, '/molt-no-such-route')).status < 500);
      const refusal = await answer(refused, '/molt-no-such-route');
      assert.equal(refusal.status, 503);
      assert.match(refusal.body, /MOLT_CONNECTION_LIMIT/);
      assert.ok((await answer(held, '/molt-no-such-route')).status < 500);
    } finally {
      await Promise.all(clients.map((c) => c.destroy()));
      await server.close();
    }
  });
}

/** A client holding one connection to `url`, with the CA and certificate of `tls` (none: plain HTTP). */
export function client(url: string, tls: ConnectionOptions | undefined): Client {
  const { ca, cert, key } = tls ?? {};
  return new Client(new URL(url).origin, { connect: { ca, cert, key }, pipelining: 1 });
}

/** One GET on `client`: its status and body. */
export async function answer(
  client: Client,
  path: string,
): Promise<{ status: number; body: string }> {
  const res = await client.request({ path, method: 'GET' });
  return { status: res.statusCode, body: await res.body.text() };
}
