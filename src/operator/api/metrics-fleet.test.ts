// SPDX-License-Identifier: Apache-2.0
// What `GET /metrics` says about the fleet and the webhook sinks (docs/adr/0009): agent
// reachability and releases from the leader's observations, FleetLock slots from the store,
// webhook deliveries and drops.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scrapeFixtureMetrics } from '../../testkit/metrics-scrape.ts';
import { MemoryObservationBook } from './observations.ts';
import { fleetFamilies } from './metrics-fleet.ts';
import { fixtureMachines } from '../../testkit/operator-api-fixture.ts';

describe('metrics of the fleet and the webhooks', () => {
  it('says which agents answered the leader, which release each pool runs, and FleetLock slots', async () => {
    const text = await scrapeFixtureMetrics();
    for (const line of [
      'molt_operator_agent_reachable{machine="w-1",pool="workers"} 1',
      'molt_operator_agent_reachable{machine="w-2",pool="workers"} 0',
      'molt_operator_machines_by_release{pool="workers",version="1.0.0"} 3',
      'molt_operator_machines_by_release{pool="workers",version="unknown"} 1',
      'molt_operator_machines_by_release{pool="cp",version="unknown"} 2',
      'molt_operator_fleetlock_slots{group="workers"} 1',
      'molt_operator_fleetlock_holders{group="workers"} 1',
      'molt_operator_fleetlock_holders{group="cp"} 0',
      'molt_operator_webhook_deliveries_total{sink="ops"} 1',
      'molt_operator_webhook_retries_total{sink="ops"} 1',
      'molt_operator_webhook_dropped_total{sink="ops",reason="failed"} 1',
      'molt_operator_webhook_dropped_total{sink="ops",reason="overflow"} 0',
      'molt_operator_webhook_backlog{sink="ops"} 2',
      'molt_operator_webhook_checks_total{sink="ops"} 0',
    ])
      assert.ok(text.split('\n').includes(line), `missing: ${line}`);
    // cp machines were never observed: no reachability series, rather than a false "away".
    assert.doesNotMatch(text, /molt_operator_agent_reachable\{machine="cp-1"/);
  });

  it('names the families on a standby without samples: only the leader observes agents', () => {
    const book = new MemoryObservationBook();
    book.set('w-1', { at: 1, error: 'away' });
    const state = { machines: fixtureMachines, rollouts: [], starts: [], holds: {}, blocks: [] };
    const lines = fleetFamilies({ state, leader: false, observations: book });
    assert.ok(lines.includes('# TYPE molt_operator_agent_reachable gauge'));
    assert.deepEqual(
      lines.filter((l) => !l.startsWith('#')),
      [],
    );
    const leading = fleetFamilies({ state, leader: true, observations: book });
    assert.ok(leading.includes('molt_operator_agent_reachable{machine="w-1",pool="workers"} 0'));
  });
});
