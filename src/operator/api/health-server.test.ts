// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ListeningApi } from '../../platform/https/server.ts';
import { createHealthServer, readiness, type HealthDeps } from './health-server.ts';

/** A store whose next answer the test decides. */
function switchable(): HealthDeps & { answer: () => Promise<unknown>; leader: boolean } {
  const d = {
    answer: (): Promise<unknown> => Promise.resolve(7),
    leader: false,
    storeAnswers: () => d.answer(),
    isLeader: () => d.leader,
  };
  return d;
}

describe('the probe listener', () => {
  const deps = switchable();
  let server: ListeningApi;
  before(async () => {
    server = await createHealthServer({ deps, host: '127.0.0.1', port: 0 });
  });
  after(async () => server.close());
  const get = (path: string) => fetch(`${server.url}${path}`);

  it('is ready while the store answers, and says who leads in the body only', async () => {
    for (const leader of [false, true]) {
      deps.leader = leader;
      const r = await get('/readyz');
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), { ready: true, leader });
    }
  });

  it('is alive but not ready when the store fails, naming only the code', async () => {
    deps.answer = () =>
      Promise.reject(
        new MoltError(ErrorCode.StoreUnavailable, 'etcd at https://10.1.2.3:2379 did not answer'),
      );
    const ready = await get('/readyz');
    assert.equal(ready.status, 503);
    const body = await ready.text();
    assert.deepEqual(JSON.parse(body), {
      ready: false,
      leader: deps.leader,
      code: 'MOLT_STORE_UNAVAILABLE',
    });
    assert.doesNotMatch(
      body,
      /10\.1\.2\.3/,
      'no endpoint or message leaks to an unauthenticated port',
    );
    const alive = await get('/healthz');
    assert.equal(alive.status, 200);
    assert.equal(await alive.text(), 'ok\n');
  });

  it('serves nothing else', async () => {
    for (const path of ['/v1/rollouts', '/', '/metrics'])
      assert.equal((await get(path)).status, 404);
    const post = await fetch(`${server.url}/readyz`, { method: 'POST' });
    assert.equal(post.status, 404);
  });
});

describe('readiness', () => {
  it('counts a store that does not answer in time as not ready (MOLT_TIMED_OUT)', async () => {
    const r = await readiness(
      { storeAnswers: () => new Promise(() => undefined), isLeader: () => true },
      50,
    );
    assert.deepEqual(r, { ready: false, leader: true, code: ErrorCode.TimedOut });
  });

  it('counts a failure that is not molt’s own as the store being unreachable', async () => {
    const r = await readiness({
      storeAnswers: () => Promise.reject(new TypeError('fetch failed')),
      isLeader: () => false,
    });
    assert.deepEqual(r, { ready: false, leader: false, code: ErrorCode.StoreUnavailable });
  });
});
