// SPDX-License-Identifier: Apache-2.0
// The HTTP gate probe against a real server on loopback: status matches, status differs, a
// redirect (not followed), a server that never answers (timeout) and a closed port.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHttpGateProbe } from './index.ts';

let server: Server;
let base: string;
before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') return; // never answers
    if (req.url === '/moved') {
      res.writeHead(302, { location: '/ok' }).end();
      return;
    }
    res.writeHead(req.url === '/ok' ? 200 : req.url === '/teapot' ? 418 : 503).end('body');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const gate = (path: string, over = {}) => ({
  kind: 'gate' as const,
  name: 'g',
  url: `${base}${path}`,
  ...over,
});

describe('HTTP gate probe', () => {
  const probe = createHttpGateProbe();
  it('passes on the expected status and fails on any other, naming it', async () => {
    assert.deepEqual(await probe.check(gate('/ok')), { ok: true, message: 'HTTP 200' });
    assert.deepEqual(await probe.check(gate('/down')), {
      ok: false,
      message: 'HTTP 503 (expected 200)',
    });
    assert.deepEqual(await probe.check(gate('/teapot', { expectStatus: 418 })), {
      ok: true,
      message: 'HTTP 418',
    });
  });
  it('does not follow a redirect', async () => {
    assert.equal((await probe.check(gate('/moved'))).ok, false);
  });
  it('fails on a timeout and on a closed port, never throwing', async () => {
    const slow = await probe.check(gate('/hang', { timeoutMs: 200 }));
    assert.equal(slow.ok, false);
    assert.match(slow.message, /abort|timeout/i);
    const closed = await probe.check({ kind: 'gate', name: 'g', url: 'http://127.0.0.1:1/' });
    assert.equal(closed.ok, false);
    assert.match(closed.message, /ECONNREFUSED|fetch failed/);
  });
});
