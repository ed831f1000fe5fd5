// SPDX-License-Identifier: Apache-2.0
// The dashboard's anonymous listener serves what the page shows and nothing more: each
// thing taken away is refused there and still served on the mTLS API (here on inject() with an
// identity), and every write is 403.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Identity } from '../../platform/https/identity.ts';
import type { ListeningApi } from '../../platform/https/server.ts';
import { fixtureNow, apiFixture } from '../../testkit/operator-api-fixture.ts';
import type { DashboardStateView } from '../../protocol/dashboard.ts';
import type { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { buildOperatorApp } from './app.ts';
import { createDashboardServer } from './dashboard-server.ts';

let server: ListeningApi;
let api: FastifyInstance;
let store: MemoryOperatorStore;

before(async () => {
  const f = await apiFixture();
  store = f.store;
  await store.setHold('w-1', {
    reason: 'disk swap in rack 7',
    until: fixtureNow + 3_600_000,
    by: 'alice',
  });
  await store.appendHistory({
    at: fixtureNow,
    kind: 'decision',
    machine: 'w-9',
    message: 'w-9 registered by w-9 in pool workers at https://10.1.2.3:7443',
    data: { action: 'register', by: 'w-9' },
  });
  server = await createDashboardServer({
    deps: f.deps,
    access: { users: [], anonymousRead: true, sessionTtl: 3_600_000 },
    tls: undefined,
    host: '127.0.0.1',
    port: 0,
  });
  api = await buildOperatorApp(f.deps, {
    identify: (): Identity => ({ name: 'w-1', role: 'node' }),
  });
});
after(async () => {
  await server.close();
  await api.close();
});

const page = async (path: string, init?: RequestInit): Promise<Response> =>
  fetch(new URL(path, server.url), init);

describe('the dashboard listener serves only what the page shows', () => {
  it('refuses /metrics and /v1/history, which the API still serves', async () => {
    for (const path of ['/metrics', '/v1/history']) {
      assert.equal((await page(path)).status, 404, path);
      assert.equal((await api.inject({ method: 'GET', url: path })).statusCode, 200, path);
    }
  });

  it('shows machines without their agent endpoints, labels, hold reasons or errors', async () => {
    const res = await page('/v1/machines');
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.doesNotMatch(text, /endpoint|https:\/\/|labels|rack 7|alice|MOLT_AGENT_UNREACHABLE/);
    const machines = JSON.parse(text) as { id: string; hold?: unknown; observed?: unknown }[];
    assert.equal(machines.length, 6);
    assert.deepEqual(machines.find((m) => m.id === 'w-1')?.hold, {
      until: new Date(fixtureNow + 3_600_000).toISOString(),
    });
    const full = (await api.inject({ method: 'GET', url: '/v1/machines' })).body;
    assert.match(full, /"endpoint":"https:\/\/w-1\.lab:7443"/);
    assert.match(full, /rack 7/);
  });

  it('streams the events the page lists, without decisions and without data', async () => {
    const res = await page('/v1/events');
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /event: machine-start/);
    assert.doesNotMatch(text, /event: decision|10\.1\.2\.3|"data"/);
    const full = (await api.inject({ method: 'GET', url: '/v1/events' })).body;
    assert.match(full, /event: decision/);
  });

  it('shows an anonymous reader the pools but no blocked release (its reason and author)', async () => {
    await store.putBlock({
      digest: `sha256:${'1'.repeat(64)}`,
      version: '1.1.0',
      pool: 'workers',
      reason: 'vendor advisory 42',
      by: 'alice',
      at: fixtureNow,
    });
    const state = (await (await page('/v1/dashboard')).json()) as DashboardStateView;
    assert.deepEqual(
      state.pools.map((p) => p.name),
      ['cp', 'workers'],
    );
    assert.deepEqual(state.blocks, []);
    assert.equal((await page('/v1/releases/blocks')).status, 404, 'the API’s list stays there');
    await store.removeBlock(`sha256:${'1'.repeat(64)}`, 'workers');
  });

  it('serves the reads the page makes: rollouts, a rollout, the plan', async () => {
    for (const path of ['/v1/rollouts', '/v1/rollouts/workers-1.1.0', '/v1/plan'])
      assert.equal((await page(path)).status, 200, path);
  });

  it('redacts anonymous answers from the stored state read at most once a second', async () => {
    const f = await apiFixture();
    let reads = 0;
    // The fixture's store, counting whole-state reads (its clock stands still: one second never ends).
    const counted = new Proxy(f.store, {
      get(target, key) {
        if (key === 'read')
          return () => {
            reads++;
            return target.read();
          };
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const dashboard = await createDashboardServer({
      deps: { ...f.deps, store: counted },
      access: { users: [], anonymousRead: true, sessionTtl: 3_600_000 },
      tls: undefined,
      host: '127.0.0.1',
      port: 0,
    });
    try {
      const answers = 10;
      const start = reads;
      for (let i = 0; i < answers; i++) {
        const res = await fetch(new URL('/v1/rollouts', dashboard.url));
        assert.equal(res.status, 200);
        assert.doesNotMatch(await res.text(), /https?:\/\//);
      }
      // One read per answer for the rollouts themselves, one for the redaction.
      assert.equal(reads - start, answers + 1);
    } finally {
      await dashboard.close();
    }
  });

  it('refuses every write, FleetLock and registration included', async () => {
    for (const path of [
      '/v1/rollouts/workers-1.1.0/pause',
      '/v1/machines',
      '/v1/machines/w-1/release',
      '/fleetlock/v1/pre-reboot',
    ]) {
      const res = await page(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(res.status, 403, path);
      assert.equal(((await res.json()) as { code: string }).code, 'MOLT_FORBIDDEN', path);
    }
    assert.equal(
      (await store.read()).rollouts.find((r) => r.id === 'workers-1.1.0')?.state,
      'Active',
    );
  });
});
