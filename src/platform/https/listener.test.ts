// SPDX-License-Identifier: Apache-2.0
// The listener limits over real sockets, on TLS and plain HTTP: silent peers and slow headers are
// cut, close() does not wait for handshakes, the cap refuses new connections while open ones keep
// working, and an event stream outlives every deadline until close() ends it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { Client } from 'undici';
import { createCa, issueCertificate } from '../pki/certificates.ts';
import { eventually } from '../process/managed-process.ts';
import {
  answer,
  client,
  closedWithin,
  itHoldsSlowPeers,
  openSocket,
  promptlyMs,
  settlesWithin,
  silentSocket,
  statusLine,
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
const as = async (
  role: 'node' | 'operator' | 'admin',
  name: string,
): Promise<ConnectionOptions> => ({
  ca: ca.cert,
  ...(await issueCertificate({ ca, role, name })),
});
const [nodeA, nodeB, admin, operator] = await Promise.all([
  as('node', 'node-a'),
  as('node', 'node-b'),
  as('admin', 'carol'),
  as('operator', 'operator-1'),
]);

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

    it('answers connections past the cap with MOLT_CONNECTION_LIMIT while open ones keep working', async () => {
      const server = await serve(mode.tls, { maxConnections: 2 });
      const clients = [0, 1, 2].map(() => client(server.url, mode.client));
      try {
        assert.equal((await answer(clients[0]!, '/ping')).status, 200);
        assert.equal((await answer(clients[1]!, '/ping')).status, 200);
        const refused = await answer(clients[2]!, '/ping');
        assert.equal(refused.status, 503);
        assert.match(refused.body, /"code":"MOLT_CONNECTION_LIMIT"/);
        assert.equal((await answer(clients[0]!, '/ping')).status, 200);
        assert.equal((await answer(clients[1]!, '/ping')).status, 200);
      } finally {
        await Promise.all(clients.map((c) => c.destroy()));
        await server.close();
      }
    });

    it('never cuts an established connection for the pending budget', async () => {
      const limits = { maxPending: 2, maxPendingPerAddress: 2, keepAliveTimeoutMs: 60_000 };
      const server = await serve(mode.tls, limits);
      const clients = [0, 1, 2, 3, 4].map(() => client(server.url, mode.client));
      let cut = 0;
      for (const c of clients) c.on('disconnect', () => (cut += 1));
      try {
        for (const c of clients) assert.equal((await answer(c, '/ping')).status, 200);
        const silent = await Promise.all([0, 1, 2].map(() => silentSocket(server.url)));
        for (const c of clients) assert.equal((await answer(c, '/ping')).status, 200);
        for (const s of silent) s.destroy();
        assert.equal(cut, 0, 'an established connection was cut');
      } finally {
        await Promise.all(clients.map((c) => c.destroy()));
        await server.close();
      }
    });

    it('serves a client while one address holds more silent sockets than every cap', async () => {
      // Node's own cap counted sockets at accept: silent ones filled it and refused the client.
      const server = await serve(mode.tls, {
        maxConnections: 4,
        maxPending: 4,
        maxPendingPerAddress: 4,
      });
      const silent = await Promise.all(Array.from({ length: 16 }, () => silentSocket(server.url)));
      const c = client(server.url, mode.client);
      try {
        assert.equal((await answer(c, '/ping')).status, 200);
      } finally {
        for (const s of silent) s.destroy();
        await c.destroy();
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

describe('a limited mTLS listener', () => {
  const mtls: ListenerTls = {
    ...serverPair,
    ca: ca.cert,
    requestCert: true,
    rejectUnauthorized: true,
  };
  it('serves the operator role while other identities fill the cap', async () => {
    const server = await serve(mtls, { maxConnections: 2 });
    const clients = [nodeA, nodeB, admin, operator].map((tls) => client(server.url, tls));
    const [a, b, other, op] = clients as [Client, Client, Client, Client];
    try {
      assert.equal((await answer(a, '/ping')).status, 200);
      assert.equal((await answer(b, '/ping')).status, 200);
      assert.equal((await answer(other, '/ping')).status, 503);
      assert.equal((await answer(op, '/ping')).status, 200);
      assert.equal((await answer(a, '/ping')).status, 200);
    } finally {
      await Promise.all(clients.map((c) => c.destroy()));
      await server.close();
    }
  });

  it('holds each certificate to its connections, whoever else is connected', async () => {
    const server = await serve(mtls, { maxConnectionsPerPeer: 2 });
    const clients = [nodeA, nodeA, nodeA, nodeB, operator, operator, operator].map((tls) =>
      client(server.url, tls),
    );
    try {
      const statuses: number[] = [];
      for (const c of clients) statuses.push((await answer(c, '/ping')).status);
      // The operator role is outside the per-peer cap as well as the listener's.
      assert.deepEqual(statuses, [200, 200, 429, 200, 200, 200, 200]);
    } finally {
      await Promise.all(clients.map((c) => c.destroy()));
      await server.close();
    }
  });

  it('holds a node certificate to its event streams, and frees one when a follower leaves', async () => {
    const server = await serve(mtls, { maxStreamsPerPeer: 2 });
    const follow = async (tls: ConnectionOptions): Promise<{ socket: Socket; status: string }> => {
      const socket = await openSocket(server.url, tls);
      return { socket, status: await statusLine(socket, server.url, '/events') };
    };
    const open: Socket[] = [];
    try {
      for (const expected of ['200', '200', '429']) {
        const f = await follow(nodeA);
        open.push(f.socket);
        assert.match(f.status, new RegExp(`^HTTP/1\\.1 ${expected}`));
      }
      const other = await follow(nodeB);
      open.push(other.socket);
      assert.match(other.status, /^HTTP\/1\.1 200/);
      open[0]?.destroy();
      await eventually(async () => {
        const again = await follow(nodeA);
        open.push(again.socket);
        assert.match(again.status, /^HTTP\/1\.1 200/);
      });
    } finally {
      for (const s of open) s.destroy();
      await server.close();
    }
  });
});
