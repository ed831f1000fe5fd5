// SPDX-License-Identifier: Apache-2.0
// The page's state carries where each pool goes next and what it passes over (the releases and
// pools page draws them), and however many pages refresh, the registry is asked at most every 10 s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ListeningApi } from '../../platform/https/server.ts';
import type { DashboardStateView } from '../../protocol/dashboard.ts';
import { apiFixture, fixtureNow } from '../../testkit/operator-api-fixture.ts';
import { release } from '../decide/fixtures.test.ts';
import { createDashboardServer } from './dashboard-server.ts';

let server: ListeningApi;
let asked = 0;
let clock = fixtureNow;
const newer = release('1.2.0', `sha256:${'c'.repeat(64)}`);

before(async () => {
  const f = await apiFixture();
  const fleet = {
    ...f.deps.fleet,
    pools: f.deps.fleet.pools.map((p) => ({ ...p, channel: 'stable' })),
  };
  server = await createDashboardServer({
    deps: {
      ...f.deps,
      fleet,
      now: () => clock,
      releases: () => {
        asked++;
        return Promise.resolve([newer]);
      },
    },
    access: { users: [], anonymousRead: true, sessionTtl: 3_600_000 },
    tls: undefined,
    host: '127.0.0.1',
    port: 0,
  });
});
after(() => server.close());

const state = async (): Promise<DashboardStateView> =>
  (await (await fetch(new URL('/v1/dashboard', server.url))).json()) as DashboardStateView;

describe('the dashboard’s view of each pool’s releases', () => {
  it('says where each pool goes next, from the registry’s releases', async () => {
    const s = await state();
    assert.deepEqual(
      s.plan.releases?.map((r) => [r.pool, r.next?.version]),
      [
        ['cp', '1.2.0'],
        ['workers', '1.2.0'],
      ],
    );
  });

  it('asks the registry at most every 10 s, however often pages refresh', async () => {
    const first = asked;
    assert.ok(first >= 1);
    for (let i = 0; i < 5; i++) await state();
    assert.equal(asked, first, 'five refreshes within 10 s: the same answer');
    clock += 10_000;
    await state();
    assert.equal(asked, first + 1, 'asked again once 10 s have passed');
  });
});
