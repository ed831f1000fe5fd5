// SPDX-License-Identifier: Apache-2.0
// The CLI's mTLS requests on node:https against a real TLS server: answers, a streamed upload
// answered while it is sent, and the two bounds, each failing with the code its words name.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connectFailure } from '../../protocol/connect-failure.ts';
import { createCa, issueCertificate } from '../../platform/pki/certificates.ts';
import { createHttpsFetch } from './https-fetch.ts';

describe('the CLI’s requests over mTLS', () => {
  let server: Server;
  let base = '';
  let tls: { ca: string; cert: string; key: string };
  const held: (() => void)[] = [];

  before(async () => {
    const ca = await createCa();
    const serving = await issueCertificate({ ca, role: 'node', name: 'operator-1' });
    const client = await issueCertificate({ ca, role: 'admin', name: 'alice' });
    tls = { ca: ca.cert, ...client };
    server = createServer(
      { ...serving, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        if (req.url === '/silent') return void held.push(() => res.end());
        if (req.url === '/late') return void setTimeout(() => res.end('done'), 600);
        if (req.url === '/stalls') {
          res.writeHead(200).write('data: one\n\n');
          return void held.push(() => res.end());
        }
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const who = (
            req.socket as { getPeerCertificate?: () => { subject: { CN: string } } }
          ).getPeerCertificate?.().subject.CN;
          res.writeHead(201).end(`${String(who)} sent ${String(Buffer.concat(chunks).length)}`);
        });
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });
  after(() => {
    for (const release of held) release();
    server.closeAllConnections();
    server.close();
  });

  const client = (o: { timeoutMs?: number; bodyTimeoutMs?: number } = {}) =>
    createHttpsFetch({ tls, timeoutMs: o.timeoutMs ?? 5_000, bodyTimeoutMs: o.bodyTimeoutMs ?? 0 });

  it('answers with the status and body, as the client certificate’s holder', async () => {
    const c = client();
    const res = await c.fetch(`${base}/x`, { method: 'POST', headers: {}, body: 'hello' });
    assert.equal(res.status, 201);
    assert.equal(await res.text(), 'alice sent 5');
    c.destroy();
  });

  it('sends a byte-stream body as it comes', async () => {
    const c = client();
    async function* parts() {
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setImmediate(r));
        yield new Uint8Array(1024).fill(i);
      }
    }
    const res = await c.fetch(`${base}/upload`, { method: 'PUT', headers: {}, body: parts() });
    assert.equal(await res.text(), 'alice sent 4096');
    c.destroy();
  });

  it('gives up on an answer that does not come: connected, but no answer in time', async () => {
    const c = client({ timeoutMs: 300 });
    const e = await c.fetch(`${base}/silent`, { method: 'GET', headers: {} }).then(
      () => assert.fail('answered'),
      (x: unknown) => x,
    );
    assert.equal(connectFailure(e).text, 'connected, but no answer in time (ANSWER_TIMEOUT)');
    c.destroy();
  });

  it('waits longer for an answer the request says comes late (a restore)', async () => {
    const c = client({ timeoutMs: 300 });
    const late = await c.fetch(`${base}/late`, {
      method: 'GET',
      headers: {},
      answerWithinMs: 5_000,
    });
    assert.equal(await late.text(), 'done');
    await assert.rejects(
      c.fetch(`${base}/late`, { method: 'GET', headers: {} }),
      (e: unknown) => connectFailure(e).code === 'ANSWER_TIMEOUT',
    );
    c.destroy();
  });

  it('gives up on a body that stops, and not on a followed stream’s silence', async () => {
    const bounded = client({ bodyTimeoutMs: 300 });
    const res = await bounded.fetch(`${base}/stalls`, { method: 'GET', headers: {} });
    const e = await res.text().then(
      () => assert.fail('ended'),
      (x: unknown) => x,
    );
    assert.equal(connectFailure(e).text, 'the answer stopped coming (BODY_TIMEOUT)');
    bounded.destroy();

    const follow = client({ bodyTimeoutMs: 0 });
    const stream = await follow.fetch(`${base}/stalls`, { method: 'GET', headers: {} });
    const silent = await Promise.race([
      stream.text().then(
        () => 'ended',
        () => 'failed',
      ),
      new Promise((r) => {
        setTimeout(() => {
          r('still open');
        }, 600);
      }),
    ]);
    assert.equal(silent, 'still open');
    follow.destroy();
  });
});
