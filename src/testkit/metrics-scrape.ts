// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /metrics` of the operator API over the test fleet of `operator-api-fixture.ts`, with every
 * family holding samples: rollouts in each state, a pass, a start, observed agents (one away), a
 * FleetLock slot taken, a webhook sink that delivered, retried and dropped, and a GM image missing. What the
 * monitoring assets (`deploy/monitoring`) are checked against, so they name only metrics the
 * operator really exposes.
 */
import { buildOperatorApp } from '../operator/api/app.ts';
import { OperatorMetrics } from '../operator/api/metrics.ts';
import type { ImagesDeps } from '../operator/images/observe.ts';
import { FakeWorkloads } from '../operator/ports/workloads.fake.ts';
import type { Identity } from '../platform/https/identity.ts';
import { apiFixture, fixtureNow } from './operator-api-fixture.ts';

/** The exposition text, as the leader serves it. */
export async function scrapeFixtureMetrics(): Promise<string> {
  const f = await apiFixture();
  const metrics = new OperatorMetrics(['ops']);
  metrics.recordStart('workers');
  metrics.recordPass({ startedAt: fixtureNow, durationMs: 250, ok: true });
  metrics.notifications.delivered('ops');
  metrics.notifications.retried('ops');
  metrics.notifications.dropped('ops', 'failed', 1);
  metrics.notifications.backlog('ops', 2);
  // A GM digest the registry lost (docs/adr/0013): the image policies' metric has a sample.
  const images: ImagesDeps = {
    policies: () => [],
    workloads: new FakeWorkloads(),
    scan: () => Promise.reject(new Error('the fixture scans nothing')),
    now: () => fixtureNow,
    gm: {
      findings: () => [
        {
          ...{ policy: 'web', repository: 'registry.example.com/acme/web', reason: 'GM' },
          ...{ digest: `sha256:${'a'.repeat(64)}`, state: 'missing' },
        },
      ],
    },
  };
  const app = await buildOperatorApp(
    { ...f.deps, metrics, images },
    {
      identify: (request) => {
        const [role, name] = String(request.headers['x-as']).split(':');
        return { role, name } as Identity;
      },
    },
  );
  try {
    await app.inject({
      method: 'POST',
      url: '/fleetlock/v1/pre-reboot',
      headers: { 'x-as': 'node:w-1', 'fleet-lock-protocol': 'true' },
      payload: { client_params: { id: 'w-1', group: 'workers' } },
    });
    const res = await app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { 'x-as': 'node:prometheus' },
    });
    if (res.statusCode !== 200) throw new Error(`GET /metrics: ${String(res.statusCode)}`);
    return res.body;
  } finally {
    await app.close();
  }
}
