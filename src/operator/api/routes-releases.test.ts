// SPDX-License-Identifier: Apache-2.0
// Blocked releases through the operator API on inject() with the in-memory store.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Release } from '../../core/releases/release.ts';
import type { Identity } from '../../platform/https/identity.ts';
import type { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { apiFixture, fixtureNow } from '../../testkit/operator-api-fixture.ts';
import { buildOperatorApp } from './app.ts';
import { release } from '../decide/fixtures.test.ts';
import type { OperatorApiDeps } from './context.ts';

let store: MemoryOperatorStore;
let app: FastifyInstance;
let deps: OperatorApiDeps;

const digest = (c: string): string => `sha256:${c.repeat(64)}`;
const listed = (version: string, c: string): Release => release(version, digest(c));
/** The fixture's rollouts name 1.0.1, 1.0.8, 1.0.9 and 1.1.0; the registry lists 1.2.0 too. */
const v110 = `sha256:${'110'.padEnd(64, '0')}`;
const v109 = `sha256:${'109'.padEnd(64, '0')}`;

async function build(override: Partial<OperatorApiDeps> = {}): Promise<FastifyInstance> {
  return buildOperatorApp(
    { ...deps, ...override },
    {
      identify: (request) => {
        const [role, name] = String(request.headers['x-as'] ?? 'node:n-1').split(':');
        return { role, name } as Identity;
      },
    },
  );
}

beforeEach(async () => {
  const f = await apiFixture();
  store = f.store;
  deps = { ...f.deps, releases: () => Promise.resolve([listed('1.2.0', 'c')]) };
  app = await build();
});

type As = 'node' | 'operator' | 'admin';
const post = (url: string, body: unknown, as: As = 'operator', on = app) =>
  on.inject({
    method: 'POST',
    url,
    headers: { 'x-as': `${as}:${as}-1`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
const blocks = async (): Promise<unknown[]> =>
  (await app.inject({ method: 'GET', url: '/v1/releases/blocks' })).json<unknown[]>();

describe('blocked releases', () => {
  it('blocks a release by version for one pool, lists it, and records who in the history', async () => {
    const res = await post('/v1/releases/block', {
      release: '1.1.0',
      pool: 'workers',
      reason: 'CVE-2026-1',
    });
    assert.equal(res.statusCode, 200, res.body);
    const view = {
      digest: v110,
      version: '1.1.0',
      pool: 'workers',
      reason: 'CVE-2026-1',
      by: 'operator-1',
      at: new Date(fixtureNow).toISOString(),
    };
    assert.deepEqual(res.json(), { blocks: [view] });
    assert.deepEqual(await blocks(), [view]);
    assert.match(
      (await store.history()).at(-1)?.message ?? '',
      /release 1.1.0 blocked for pool workers by operator-1: CVE-2026-1/,
    );
  });

  it('blocks a release only the registry lists, by digest, for every pool', async () => {
    const res = await post('/v1/releases/block', { release: digest('c'), reason: 'bad kernel' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      (await store.read()).blocks.map((b) => [b.digest, b.version, b.pool]),
      [[digest('c'), '1.2.0', undefined]],
    );
  });

  it('refuses an unknown release, an unknown pool, no reason and a node, changing nothing', async () => {
    const unknown = await post('/v1/releases/block', { release: digest('9'), reason: 'x' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json<{ code: string }>().code, ErrorCode.UnknownRelease);
    const typo = await post('/v1/releases/block', { release: '1.1', reason: 'x' });
    assert.equal(typo.json<{ code: string }>().code, ErrorCode.UnknownRelease);
    const pool = await post('/v1/releases/block', { release: '1.1.0', pool: 'db', reason: 'x' });
    assert.equal(pool.statusCode, 400);
    assert.equal(pool.json<{ code: string }>().code, ErrorCode.UnknownPool);
    const reasonless = await post('/v1/releases/block', { release: '1.1.0', reason: ' ' });
    assert.equal(reasonless.json<{ code: string }>().code, ErrorCode.BadInput);
    const node = await post('/v1/releases/block', { release: '1.1.0', reason: 'x' }, 'node');
    assert.equal(node.statusCode, 403);
    assert.deepEqual((await store.read()).blocks, []);
  });

  it('still blocks the rollouts’ releases when the registry is down, and says so for others', async () => {
    const down = new MoltError(ErrorCode.RegistryUnreachable, 'registry.lab: connection refused');
    const offline = await build({ releases: () => Promise.reject(down) });
    const known = await post(
      '/v1/releases/block',
      { release: '1.1.0', reason: 'x' },
      'operator',
      offline,
    );
    assert.equal(known.statusCode, 200, known.body);
    const other = await post(
      '/v1/releases/block',
      { release: '1.2.0', reason: 'x' },
      'operator',
      offline,
    );
    assert.equal(other.statusCode, 404);
    assert.match(other.json<{ message: string }>().message, /no release 1.2.0 is known/);
  });

  it('unblocks one pool or every block of a release; nothing to lift is MOLT_NOT_BLOCKED', async () => {
    await post('/v1/releases/block', { release: '1.1.0', reason: 'all' });
    await post('/v1/releases/block', { release: '1.1.0', pool: 'cp', reason: 'cp' });
    const wrongPool = await post('/v1/releases/unblock', { release: '1.1.0', pool: 'workers' });
    assert.equal(wrongPool.statusCode, 404);
    assert.equal(wrongPool.json<{ code: string }>().code, ErrorCode.NotBlocked);
    assert.match(wrongPool.json<{ hint: string }>().hint, /every pool, pool cp/);
    const cp = await post('/v1/releases/unblock', { release: v110, pool: 'cp' });
    assert.equal(cp.statusCode, 200, cp.body);
    assert.deepEqual(
      (await store.read()).blocks.map((b) => b.pool),
      [undefined],
    );
    const all = await post('/v1/releases/unblock', { release: '1.1.0' });
    assert.equal(all.json<{ blocks: unknown[] }>().blocks.length, 1);
    assert.deepEqual(await blocks(), []);
    const again = await post('/v1/releases/unblock', { release: '1.1.0' });
    assert.equal(again.json<{ code: string }>().code, ErrorCode.NotBlocked);
    assert.match((await store.history()).at(-1)?.message ?? '', /unblocked for every pool/);
  });

  it('refuses to approve or resume a rollout whose release is blocked, naming the unblock', async () => {
    await post('/v1/releases/block', { release: '1.1.0', pool: 'cp', reason: 'CVE-2026-1' });
    const approve = await post('/v1/rollouts/cp-1.1.0/approve', {});
    assert.equal(approve.statusCode, 409);
    assert.match(approve.json<{ message: string }>().message, /blocked for pool cp by operator-1/);
    assert.match(
      approve.json<{ hint: string }>().hint,
      /molt releases unblock sha256:110\d+ --pool cp/,
    );
    const stored = (await store.read()).rollouts.find((r) => r.id === 'cp-1.1.0');
    assert.equal(stored?.state, 'AwaitingApproval');
  });

  it('says in the plan where each pool goes next and why a blocked release is not taken', async () => {
    await post('/v1/releases/block', { release: '1.2.0', pool: 'workers', reason: 'CVE-2026-1' });
    const pools = [
      { name: 'cp', policies: [] },
      { name: 'workers', channel: 'stable', policies: [] },
    ];
    const withChannel = await build({ fleet: { ...deps.fleet, pools } });
    const plan = await withChannel.inject({ method: 'GET', url: '/v1/plan' });
    const releases = plan.json<{
      releases?: { pool: string; notTaken: { code: string; reason: string }[] }[];
    }>().releases;
    const workers = releases?.find((p) => p.pool === 'workers');
    assert.deepEqual(
      releases?.find((p) => p.pool === 'cp'),
      { pool: 'cp', notTaken: [], none: 'the pool follows no channel and no pool' },
    );
    assert.deepEqual(workers?.notTaken, [
      {
        version: '1.2.0',
        digest: digest('c'),
        code: 'Blocked',
        reason: 'blocked by operator-1: CVE-2026-1',
      },
    ]);
    const offline = await build({ releases: () => Promise.reject(new Error('registry down')) });
    const without = await offline.inject({ method: 'GET', url: '/v1/plan' });
    assert.equal(without.statusCode, 200, 'the plan does not wait on the registry');
    assert.equal(without.json<{ releases?: unknown }>().releases, undefined);
  });

  it('asks the registry and the API server for the plan at most every 10 s, and for a block every time', async () => {
    let asked = 0;
    let versions = 0;
    let clock = fixtureNow;
    const counted = await build({
      now: () => clock,
      releases: () => {
        asked++;
        return Promise.resolve([listed('1.2.0', 'c')]);
      },
      kubernetesVersion: () => {
        versions++;
        return Promise.resolve('v1.36.3');
      },
    });
    for (let i = 0; i < 5; i++) await counted.inject({ method: 'GET', url: '/v1/plan' });
    assert.equal(asked, 1, 'five plans within 10 s: one registry listing');
    assert.equal(versions, 1, 'and one question to the API server');
    clock += 10_000;
    await counted.inject({ method: 'GET', url: '/v1/plan' });
    assert.equal(asked, 2, 'asked again once 10 s have passed');
    const blocked = await post(
      '/v1/releases/block',
      { release: '1.2.0', reason: 'r' },
      'operator',
      counted,
    );
    assert.equal(blocked.statusCode, 200, blocked.body);
    assert.equal(asked, 3, 'a block names what the registry lists now');
  });

  it('lifts the block a halted rollout made when an admin resumes it with force, not before', async () => {
    const halted = {
      digest: v109,
      pool: 'cp',
      version: '1.0.9',
      reason: 'halted',
      by: 'operator',
      at: 1,
      rollout: 'cp-1.0.9',
    };
    await store.putBlock(halted);
    const plain = await post('/v1/rollouts/cp-1.0.9/resume', {}, 'admin');
    assert.equal(plain.statusCode, 409);
    assert.match(plain.json<{ hint: string }>().hint, /--force/);
    assert.equal((await store.read()).blocks.length, 1, 'a refused resume lifts nothing');
    const forced = await post('/v1/rollouts/cp-1.0.9/resume', { force: true }, 'admin');
    assert.equal(forced.statusCode, 200, forced.body);
    assert.deepEqual((await store.read()).blocks, []);
    assert.match((await store.history()).at(-1)?.message ?? '', /unblocked for pool cp/);
    // A person's block is not the rollout's own: it stays, and the resume is refused.
    await store.updateRollout('cp-1.0.9', (r) => ({ ...r, state: 'Halted' }));
    await store.putBlock({ digest: v109, pool: 'cp', reason: 'no', by: 'ops', at: 2 });
    const refused = await post('/v1/rollouts/cp-1.0.9/resume', { force: true }, 'admin');
    assert.equal(refused.statusCode, 409);
    assert.equal((await store.read()).blocks.length, 1);
  });
});
