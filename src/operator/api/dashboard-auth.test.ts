// SPDX-License-Identifier: Apache-2.0
// Signing in to the dashboard and acting from it, over a real socket: without
// `anonymousRead` nothing is read before signing in; a token makes an HttpOnly SameSite=Strict
// session; operators and admins act through the API's own routes (recorded as dashboard:<name>),
// viewers cannot; a write needs this origin and the session's CSRF header; sign-ins are limited.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { ListeningApi } from '../../platform/https/server.ts';
import { sha256Hex } from '../../platform/pki/tokens.ts';
import type { DashboardStateView, SessionView } from '../../protocol/dashboard.ts';
import { apiFixture, fixtureNow } from '../../testkit/operator-api-fixture.ts';
import type { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { createDashboardServer } from './dashboard-server.ts';

const tokens = {
  alice: 'alice-token-0123456789',
  vic: 'vic-token-0123456789',
  ada: 'ada-token-0123456789',
};
const users = [
  { name: 'alice', role: 'operator' as const, tokenSha256: sha256Hex(tokens.alice) },
  { name: 'vic', role: 'viewer' as const, tokenSha256: sha256Hex(tokens.vic) },
  { name: 'ada', role: 'admin' as const, tokenSha256: sha256Hex(tokens.ada) },
];
const hour = 3_600_000;

let server: ListeningApi;
let store: MemoryOperatorStore;
let clock = fixtureNow;
let origin: string;

before(async () => {
  const f = await apiFixture();
  store = f.store;
  const op = (id: string, last: string) => ({
    operationId: id,
    firstTime: '2026-11-24T09:00:00Z',
    lastTime: last,
    events: 3,
  });
  const journal = {
    operations: (m: { id: string }) =>
      Promise.resolve(
        m.id === 'w-1'
          ? [op('op-old', '2026-11-24T09:10:00Z'), op('op-new', '2026-11-24T09:50:00Z')]
          : [],
      ),
  };
  server = await createDashboardServer({
    deps: { ...f.deps, journal, now: () => clock },
    access: { users, anonymousRead: false, sessionTtl: hour },
    tls: undefined,
    host: '127.0.0.1',
    port: 0,
  });
  origin = new URL(server.url).origin;
});
after(() => server.close());

interface Signed {
  readonly cookie: string;
  readonly session: SessionView;
  readonly setCookie: string;
}

const call = (path: string, init: RequestInit = {}): Promise<Response> =>
  fetch(new URL(path, server.url), init);

async function signIn(token: string, from = origin): Promise<Signed> {
  const res = await call('/v1/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: from },
    body: JSON.stringify({ token }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const setCookie = res.headers.get('set-cookie') ?? '';
  return {
    cookie: setCookie.split(';')[0] ?? '',
    session: (await res.json()) as SessionView,
    setCookie,
  };
}

/** A write as the page makes it: this origin, the cookie, the CSRF header. */
const act = (s: Signed, path: string, body: unknown = {}, over: Record<string, string> = {}) =>
  call(path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      origin,
      cookie: s.cookie,
      'x-molt-csrf': s.session.csrf ?? '',
      ...over,
    },
    body: JSON.stringify(body),
  });

/** A sign-in posted from local address `from` (any 127.0.0.0/8 address is this host's). */
function signInFrom(from: string, token: string): Promise<{ status: number; body: string }> {
  const url = new URL('/v1/session', server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: from,
        // A connection each, closed after its answer (idle ones would fill the listener's cap).
        agent: false,
        headers: { 'content-type': 'application/json', origin, connection: 'close' },
      },
      (res) => {
        res.setEncoding('utf8');
        let body = '';
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ token }));
  });
}

const code = async (res: Response): Promise<string> =>
  ((await res.json()) as { code: string }).code;
const stateOf = async (id: string) => (await store.read()).rollouts.find((r) => r.id === id)?.state;

describe('the dashboard without anonymousRead', () => {
  it('reads nothing before signing in: 401, and the page carries only the session', async () => {
    for (const path of ['/v1/machines', '/v1/rollouts', '/v1/plan', '/v1/dashboard', '/v1/events'])
      assert.equal(await code(await call(path)), 'MOLT_UNAUTHENTICATED', path);
    const page = await call('/');
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /"anonymousRead":false/);
    assert.doesNotMatch(html, /w-1|workers-1\.1\.0/);
  });

  it('refuses a token no user has, and one from another origin', async () => {
    const res = await call('/v1/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ token: 'guess' }),
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('set-cookie'), null);
    const cross = await call('/v1/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify({ token: tokens.alice }),
    });
    assert.equal(await code(cross), 'MOLT_FORBIDDEN');
  });

  it('signs in with a token: an HttpOnly, SameSite=Strict cookie for the session’s length', async () => {
    const s = await signIn(tokens.alice);
    assert.match(
      s.setCookie,
      /^molt_session=[\w-]{43}; Max-Age=3600; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    assert.deepEqual(s.session.user, { name: 'alice', role: 'operator' });
    assert.equal(s.session.expiresAt, new Date(clock + hour).toISOString());
    const state = (await (
      await call('/v1/dashboard', { headers: { cookie: s.cookie } })
    ).json()) as DashboardStateView;
    assert.equal(state.machines.length, 6);
    assert.ok(state.rollouts.some((r) => r.id === 'workers-1.1.0'));
    const page = await (await call('/', { headers: { cookie: s.cookie } })).text();
    assert.match(
      page,
      /<script id="molt-state" type="application\/json">\{"session":\{.*"machines":\[/,
    );
  });

  it('lets an operator pause a rollout, recorded as dashboard:alice', async () => {
    const s = await signIn(tokens.alice);
    const res = await act(s, '/v1/rollouts/workers-1.1.0/pause', { reason: 'looking at w-2' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(await stateOf('workers-1.1.0'), 'Paused');
    const last = (await store.history({ afterSeq: 0, limit: 100 })).at(-1);
    assert.ok(last);
    assert.equal(last.message, 'rollout workers-1.1.0 paused by dashboard:alice: looking at w-2');
    assert.equal(last.data?.['by'], 'dashboard:alice');
  });

  it('refuses a write without the session’s CSRF header, or from another origin', async () => {
    const s = await signIn(tokens.alice);
    const noCsrf = await act(s, '/v1/rollouts/workers-1.1.0/resume', {}, { 'x-molt-csrf': 'nope' });
    assert.equal(noCsrf.status, 403);
    const cross = await act(
      s,
      '/v1/rollouts/workers-1.1.0/resume',
      {},
      { origin: 'http://evil.example' },
    );
    assert.equal(cross.status, 403);
    assert.equal(await stateOf('workers-1.1.0'), 'Paused');
  });

  it('refuses every action to a viewer, with 403 MOLT_FORBIDDEN', async () => {
    const s = await signIn(tokens.vic);
    const res = await act(s, '/v1/rollouts/workers-1.1.0/resume');
    assert.equal(res.status, 403);
    const body = (await res.json()) as { message: string };
    assert.match(body.message, /^vic \(role viewer\) may not resume rollout workers-1\.1\.0$/);
    assert.equal(await stateOf('workers-1.1.0'), 'Paused');
    assert.equal((await act(s, '/v1/machines/w-3/hold', { reason: 'x', for: '1h' })).status, 403);
  });

  it('keeps the API’s rules: only an admin resumes a halted rollout with force', async () => {
    const alice = await signIn(tokens.alice);
    const refused = await act(alice, '/v1/rollouts/cp-1.0.9/resume', { force: true });
    assert.equal(refused.status, 403);
    assert.match(
      ((await refused.json()) as { hint: string }).hint,
      /dashboard user with role admin/,
    );
    const ada = await signIn(tokens.ada);
    assert.equal((await act(ada, '/v1/rollouts/cp-1.0.9/resume', { force: true })).status, 200);
    assert.equal(await stateOf('cp-1.0.9'), 'Active');
  });

  it('holds and releases a machine, the hold naming who', async () => {
    const s = await signIn(tokens.alice);
    const res = await act(s, '/v1/machines/w-3/hold', { reason: 'disk swap', for: '2h' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await store.read()).holds['w-3']?.by, 'dashboard:alice');
    assert.equal((await act(s, '/v1/machines/w-3/release')).status, 200);
    assert.equal((await store.read()).holds['w-3'], undefined);
  });

  it('refuses whatever is not one of the page’s actions, even to an admin', async () => {
    const s = await signIn(tokens.ada);
    for (const path of ['/v1/machines', '/v1/releases/blocks', '/fleetlock/v1/pre-reboot'])
      assert.equal((await act(s, path, { id: 'w-9' })).status, 403, path);
    const del = await call('/v1/machines/w-1', {
      method: 'DELETE',
      headers: { origin, cookie: s.cookie },
    });
    assert.equal(del.status, 403);
  });

  it('shows each pool’s rules, and blocks only to a signed-in person', async () => {
    const s = await signIn(tokens.vic);
    const state = (await (
      await call('/v1/dashboard', { headers: { cookie: s.cookie } })
    ).json()) as DashboardStateView;
    assert.deepEqual(
      state.pools.map((p) => [p.name, p.rules, p.machines]),
      [
        ['cp', ['a person approves each rollout'], 2],
        ['workers', ['at most 1 machine at a time'], 4],
      ],
    );
    assert.deepEqual(state.blocks, []);
  });

  it('lets an operator block a release for a pool and lift it again; a viewer may not', async () => {
    const vic = await signIn(tokens.vic);
    const body = { release: '1.1.0', pool: 'workers', reason: 'bad NIC firmware' };
    const refused = await act(vic, '/v1/releases/block', body);
    assert.equal(refused.status, 403);
    assert.match(
      ((await refused.json()) as { message: string }).message,
      /may not block a release/,
    );
    const alice = await signIn(tokens.alice);
    const blocked = await act(alice, '/v1/releases/block', body);
    assert.equal(blocked.status, 200, await blocked.clone().text());
    const seen = (await (
      await call('/v1/dashboard', { headers: { cookie: vic.cookie } })
    ).json()) as DashboardStateView;
    assert.deepEqual(
      seen.blocks.map((b) => [b.version, b.pool, b.reason, b.by]),
      [['1.1.0', 'workers', 'bad NIC firmware', 'dashboard:alice']],
    );
    const digest = seen.blocks[0]?.digest ?? '';
    const lifted = await act(alice, '/v1/releases/unblock', { release: digest, pool: 'workers' });
    assert.equal(lifted.status, 200, await lifted.clone().text());
    assert.deepEqual((await store.read()).blocks, []);
  });

  it('ends a session when it expires and when its user signs out', async () => {
    const s = await signIn(tokens.alice);
    const out = await call('/v1/session', {
      method: 'DELETE',
      headers: { origin, cookie: s.cookie },
    });
    assert.match(out.headers.get('set-cookie') ?? '', /^molt_session=; Max-Age=0/);
    assert.equal((await call('/v1/machines', { headers: { cookie: s.cookie } })).status, 401);
    const t = await signIn(tokens.alice);
    clock += hour + 1;
    assert.equal((await call('/v1/machines', { headers: { cookie: t.cookie } })).status, 401);
  });

  it('reads a machine’s journal from its agent for a reader, the latest operation first', async () => {
    assert.equal((await call('/v1/machines/w-1/operations')).status, 401);
    const s = await signIn(tokens.vic);
    const ops = (await (
      await call('/v1/machines/w-1/operations', { headers: { cookie: s.cookie } })
    ).json()) as { operationId: string }[];
    assert.deepEqual(
      ops.map((o) => o.operationId),
      ['op-new', 'op-old'],
    );
    const unknown = await call('/v1/machines/nope/operations', { headers: { cookie: s.cookie } });
    assert.equal(unknown.status, 404);
  });

  it('forbids framing and foreign scripts on every answer', async () => {
    const res = await call('/');
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self';/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
  });

  it('lets a right token in while wrong ones from rotating addresses flood the limiter', async () => {
    // Two wrong tokens a second (the listener forgets one a second), each from another loopback
    // address, for ten minutes of the clock; a real sign-in each minute, from an address of its
    // own, must never be refused.
    const start = clock;
    try {
      for (let i = 0; i < 1200; i++) {
        clock = start + i * 500;
        const from = `127.0.${String(1 + (i >> 8))}.${String(i & 255)}`;
        const guess = await signInFrom(from, `guess-${String(i)}`);
        assert.notEqual(guess.status, 200, `guess ${String(i)}: ${guess.body}`);
        if (i % 120 !== 119) continue;
        const real = await signInFrom('127.0.9.1', tokens.vic);
        assert.equal(real.status, 200, `sign-in after guess ${String(i)}: ${real.body}`);
      }
    } finally {
      clock = start;
    }
  });

  it('limits sign-in attempts from one address: 429 with Retry-After', async () => {
    const guess = (i: number) =>
      call('/v1/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ token: `guess-${i}` }),
      });
    for (let i = 0; i < 7; i++) await guess(i);
    const last = await guess(7);
    assert.equal(last.status, 429);
    assert.ok(Number(last.headers.get('retry-after')) >= 1);
    assert.equal(await code(last), 'MOLT_RATE_LIMITED');
  });
});
