// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FleetFile } from '../protocol/fleet-schema.ts';
import { labPools } from './lab-operator.ts';

const setup = { fast: false, ports: { api: 0, dashboard: 0 } };

describe('the lab operator pools', () => {
  it('gives VMs a pool of their own on channel vm: a canary, then two at a time', () => {
    const pools = labPools({ ...setup, workers: 2, vms: 3 });
    assert.deepEqual(
      pools.map((p) => [p.name, p.channel]),
      [
        ['control-plane', 'stable'],
        ['workers', 'beta'],
        ['vms', 'vm'],
      ],
    );
    const snapshot = FleetFile.parse({ pools, machines: [] });
    const vms = snapshot.pools.find((p) => p.name === 'vms');
    assert.ok(vms !== undefined);
    assert.deepEqual(
      vms.policies.map((p) => p.kind),
      ['canary', 'concurrency', 'failure-budget'],
    );
    assert.deepEqual(vms.policies.at(1), { kind: 'concurrency', limit: { count: 2 } });
  });

  it('leaves out pools without machines', () => {
    assert.deepEqual(
      labPools({ ...setup, workers: 0, vms: 1 }).map((p) => p.name),
      ['control-plane', 'vms'],
    );
    assert.deepEqual(
      labPools({ ...setup, workers: 3, vms: 0 }).map((p) => p.name),
      ['control-plane', 'workers'],
    );
  });
});
