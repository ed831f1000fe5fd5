// SPDX-License-Identifier: Apache-2.0
// The webhook sink against a receiver on a real loopback socket: what it sends, how it signs,
// what it retries and for how long, and what it gives up on.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Notification } from '../../ports/notification-sink.ts';
import { createWebhookSink, retryAfterMs, type WebhookSinkOptions } from './index.ts';

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

const n: Notification = {
  id: 'molt-3-00ff00ff00ff00ff',
  seq: 3,
  kind: 'rollout.halted',
  at: '2026-11-23T10:00:00.000Z',
  message: 'rollout workers-1.2.0-abcd halted: 1 of 1 failed',
  rollout: 'workers-1.2.0-abcd',
  pool: 'workers',
  release: { version: '1.2.0', digest: `sha256:${'cd'.repeat(32)}` },
  by: 'operator',
  data: { state: 'Halted' },
};
const secret = Buffer.from('a shared secret');
const fast = { initialDelayMs: 10, maxDelayMs: 50 };

describe('the webhook sink over a real socket', () => {
  const received: Received[] = [];
  /** How the receiver answers each request, in turn; 200 once they run out. */
  let answers: ((res: ServerResponse) => void)[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body, at: Date.now() });
      (answers.shift() ?? ((r) => r.writeHead(200).end()))(res);
    });
  });
  let url = '';
  const sink = (o: Partial<WebhookSinkOptions> & { unsigned?: true } = {}) => {
    const { unsigned, ...rest } = o;
    return createWebhookSink({
      ...{ name: 'ops', url, format: 'json', events: ['*'], timeoutMs: 2_000 },
      ...(unsigned === undefined && { secret }),
      ...rest,
    });
  };
  const status =
    (code: number, headers: Record<string, string> = {}) =>
    (res: ServerResponse) =>
      res.writeHead(code, headers).end('no');

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/hooks/secret-token`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    received.length = 0;
    answers = [];
  });

  it('POSTs the JSON body with the event id and kind, signed over timestamp and body', async () => {
    await sink().deliver(n, new AbortController().signal);
    assert.equal(received.length, 1);
    const [r] = received;
    assert.ok(r !== undefined);
    assert.deepEqual(JSON.parse(r.body), n);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['x-molt-event-id'], n.id);
    assert.equal(r.headers['x-molt-event'], 'rollout.halted');
    const ts = String(r.headers['x-molt-timestamp']);
    assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 5);
    // The receiver's own computation, independent of sign.ts.
    const mac = createHmac('sha256', secret).update(`${ts}.${r.body}`).digest('hex');
    assert.equal(r.headers['x-molt-signature'], `sha256=${mac}`);
  });

  it('sends a Slack body unsigned when the sink has no secret', async () => {
    await sink({ format: 'slack', unsigned: true }).deliver(n, new AbortController().signal);
    const body = JSON.parse(received[0]?.body ?? '{}') as { text?: string; blocks?: unknown[] };
    assert.match(body.text ?? '', /^:warning: Rollout workers-1\.2\.0-abcd halted: /);
    assert.equal(body.blocks?.length, 2);
    assert.equal(received[0]?.headers['x-molt-signature'], undefined);
  });

  it('retries 5xx and 429 with backoff, the same event id each time, then succeeds', async () => {
    answers = [status(503), status(500), status(429)];
    const retried: unknown[] = [];
    await sink({ retry: fast, onRetry: (e) => retried.push(e) }).deliver(
      n,
      new AbortController().signal,
    );
    assert.equal(received.length, 4);
    assert.deepEqual(new Set(received.map((r) => r.headers['x-molt-event-id'])), new Set([n.id]));
    assert.deepEqual(
      retried.map((e) => (e as { code: string }).code),
      Array(3).fill('MOLT_WEBHOOK_UNREACHABLE'),
    );
  });

  it('waits as long as a Retry-After asks (up to its longest delay)', async () => {
    answers = [status(429, { 'retry-after': '1' })];
    await sink({ retry: { ...fast, maxDelayMs: 5_000 } }).deliver(n, new AbortController().signal);
    const [first, second] = received;
    assert.ok(first !== undefined && second !== undefined);
    assert.ok(second.at - first.at >= 950, `waited ${String(second.at - first.at)} ms`);
    assert.equal(retryAfterMs('120', 0), 120_000);
    assert.equal(retryAfterMs(new Date(60_000).toUTCString(), 0), 60_000);
    assert.equal(retryAfterMs('soon', 0), undefined);
  });

  it('gives up after its attempts, naming the origin only (a Slack URL path is a secret)', async () => {
    answers = Array.from({ length: 5 }, () => status(502));
    await assert.rejects(
      sink({ retry: { ...fast, attempts: 3 } }).deliver(n, new AbortController().signal),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, 'MOLT_WEBHOOK_UNREACHABLE');
        assert.match(e.message, /^sink ops at http:\/\/127\.0\.0\.1:\d+ answered 502$/);
        assert.doesNotMatch(e.message, /secret-token/);
        return true;
      },
    );
    assert.equal(received.length, 3);
  });

  it('does not retry a refusal (4xx, a redirect)', async () => {
    for (const code of [400, 401, 404, 301]) {
      received.length = 0;
      answers = [status(code, code === 301 ? { location: 'http://elsewhere/' } : {})];
      await assert.rejects(sink({ retry: fast }).deliver(n, new AbortController().signal), {
        code: 'MOLT_WEBHOOK_REFUSED',
      });
      assert.equal(received.length, 1, `HTTP ${String(code)}`);
    }
  });

  it('retries a sink that cannot be reached, within its attempts', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const retried: unknown[] = [];
    await assert.rejects(
      sink({
        url: `http://127.0.0.1:${String(port)}/`,
        retry: { ...fast, attempts: 4 },
        onRetry: (e) => retried.push(e),
      }).deliver(n, new AbortController().signal),
      { code: 'MOLT_WEBHOOK_UNREACHABLE', message: /ECONNREFUSED/ },
    );
    assert.equal(retried.length, 3);
  });

  it('bounds a receiver that never answers: each attempt by its timeout, all by the total', async () => {
    answers = Array.from({ length: 20 }, () => () => {}); // accept, never answer
    const t0 = performance.now();
    await assert.rejects(
      sink({ timeoutMs: 100, retry: { ...fast, attempts: 20, maxElapsedMs: 600 } }).deliver(
        n,
        new AbortController().signal,
      ),
      { code: 'MOLT_WEBHOOK_UNREACHABLE', message: /no delivery within 0\.6 s \(last: .*aborted/ },
    );
    const took = performance.now() - t0;
    assert.ok(took >= 550 && took < 1_500, `gave up after ${String(took)} ms`);
    assert.ok(received.length >= 3 && received.length < 20, `${String(received.length)} attempts`);
    server.closeAllConnections();
  });

  it('stops at once when its signal aborts (the operator stopping)', async () => {
    answers = [() => {}];
    const abort = new AbortController();
    const delivery = sink({ timeoutMs: 10_000 }).deliver(n, abort.signal);
    while (received.length === 0) await new Promise((r) => setTimeout(r, 5));
    const t0 = performance.now();
    abort.abort();
    await assert.rejects(delivery);
    assert.ok(performance.now() - t0 < 500);
    assert.equal(received.length, 1);
    server.closeAllConnections();
  });

  it('wants the kinds its events globs match', () => {
    const s = sink({ events: ['rollout.*', 'machine.failed'] });
    assert.deepEqual(
      ['rollout.halted', 'rollout.created', 'machine.failed', 'machine.succeeded', 'warning'].map(
        (k) => s.wants(k),
      ),
      [true, true, true, false, false],
    );
  });
});
