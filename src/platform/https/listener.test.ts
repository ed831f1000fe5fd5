// SPDX-License-Identifier: Apache-2.0
// The listener limits over real sockets, on TLS and plain HTTP: silent peers and slow headers are
// cut, close() does not wait for handshakes, the cap refuses new connections while open ones keep
// working, and an event stream outlives every deadline until close() ends it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from 'undici';
import { createCa, issueCertificate } from '../pki/certificates.ts';
import {
  closedWithin,
  itHoldsSlowPeers,
  openSocket,
  promptlyMs,
  settlesWithin,
  silentSocket,
  testLimits,
  type ListenerUnderTest,
} from '../../testkit/slow-peers.ts';
import { createApiApp } from './app.ts';
import { errorAnswers } from './errors.ts';
import { defaultListenerLimits, limitedServerFactory, resolveLimits } from './listener.ts';
import type { ListenerLimits, ListenerTls } from './listener.ts';
import { listenUrl } from './server.ts';
import { openSse, serveSse, sseKeepAliveMs } from './sse.ts';

const ca = await createCa();
const serverPair = await issueCertificate({ ca, role: 'node', name: 'listener' });
const errorAnswer = errorAnswers({}, 'bug');

/** A small API under `limits`: `/ping`, and `/events`, a frame every 100 ms until cut. */
async function serve(
  tls: ListenerTls | undefined,
  limits: Partial<ListenerLimits>,
): Promise<ListenerUnderTest> {
  const app = createApiApp({
    name: 'test',
    errorAnswer,
    serverFactory: limitedServerFactory(tls, limits),
  });
  app.get('/ping', () => ({ ok: true }));
  app.get('/events', (_request, reply) =>
    serveSse(
      reply,
      (raw) => openSse(raw, (n: number) => ({ id: String(n), event: 'tick', data: n })),
      async (sink) => {
        for (let n = 0; !sink.isClosed(); n++) {
          await sink.send(n);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      },
      { errorAnswer },
    ),
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: listenUrl(app, '127.0.0.1', tls ? 'https' : 'http'), close: () => app.close() };
}

const modes: { name: string; tls: ListenerTls | undefined; client: { ca: string } | undefined }[] =
  [
    { name: 'TLS', tls: serverPair, client: { ca: ca.cert } },
    { name: 'plain HTTP', tls: undefined, client: undefined },
  ];

for (const mode of modes) {
  describe(`a limited listener over ${mode.name}`, () => {
    itHoldsSlowPeers((limits) => serve(mode.tls, limits), mode.client);

    it('drops a connection that never sends a byte, without close()', async () => {
      const server = await serve(mode.tls, testLimits);
      try {
        assert.equal(await closedWithin(await silentSocket(server.url), promptlyMs), 'closed');
      } finally {
        await server.close();
      }
    });

    it('refuses connections past the cap while open ones keep working', async () => {
      const server = await serve(mode.tls, { maxConnections: 2 });
      const clients = [0, 1, 2].map(
        () => new Client(server.url, { connect: mode.client ?? {}, pipelining: 1 }),
      );
      const ping = async (c: Client): Promise<number> =>
        (await c.request({ path: '/ping', method: 'GET' })).statusCode;
      try {
        assert.equal(await ping(clients[0]!), 200);
        assert.equal(await ping(clients[1]!), 200);
        await assert.rejects(ping(clients[2]!));
        assert.equal(await ping(clients[0]!), 200);
        assert.equal(await ping(clients[1]!), 200);
      } finally {
        await Promise.all(clients.map((c) => c.destroy()));
        await server.close();
      }
    });

    it('keeps an event stream past every deadline, and close() ends it at once', async () => {
      const server = await serve(mode.tls, testLimits);
      const socket = await openSocket(server.url, mode.client);
      let frames = 0;
      socket.on(
        'data',
        (chunk: Buffer) => (frames += chunk.toString().split('event: tick').length - 1),
      );
      socket.write(`GET /events HTTP/1.1\r\nhost: ${new URL(server.url).host}\r\n\r\n`);
      // Three times the header, request and idle deadlines of testLimits.
      assert.equal(await closedWithin(socket, 2_400), 'open', 'the follower was cut');
      assert.ok(frames >= 10, `only ${String(frames)} frames arrived`);
      assert.equal(await settlesWithin(server.close(), promptlyMs), true, 'close() was held');
      assert.equal(await closedWithin(socket, promptlyMs), 'closed');
    });
  });
}

describe('listener limits', () => {
  it('keep a header deadline within the request deadline (Node refuses otherwise)', () => {
    const l = resolveLimits({ headersTimeoutMs: 9_000, requestTimeoutMs: 2_000 });
    assert.equal(l.headersTimeoutMs, 2_000);
  });

  it('let an event stream idle between keep-alive comments', () => {
    assert.ok(defaultListenerLimits.idleTimeoutMs >= 3 * sseKeepAliveMs);
  });
});
