// SPDX-License-Identifier: Apache-2.0
// The release molt's in-place updates choose passes discovery's eligibility (docs/adr/0014
// decision 3) as the operator is configured: signatures when it requires them, and where the
// update starts — a Machine's own machine, the oldest of a MachineSet's Machines.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Release } from '../../core/releases/release.ts';
import type { Pool } from '../../core/rollout/types.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { d10, d11, idle, release, w1, worker } from '../decide/fixtures.test.ts';
import type { Observation } from '../decide/observation.ts';
import { FakeCapiMachines } from '../ports/capi-machines.fake.ts';
import type { ManagedMachine, ManagedMachineSet } from '../ports/in-place-updates.ts';
import { moltUpdates } from './molt-updates.ts';

const d09 = `sha256:${'9'.repeat(64)}`;
const pools: Pool[] = [{ name: 'workers', channel: 'stable', policies: [] }];
const verified = { status: 'verified', format: 'sigstore-bundle' } as const;
const w1Machine: ManagedMachine = {
  kind: 'Machine',
  namespace: 'demo',
  name: 'c1-md-x',
  machine: 'w-1',
  pool: 'workers',
  controlPlane: false,
};
const set: ManagedMachineSet = {
  kind: 'MachineSet',
  namespace: 'demo',
  name: 'c1-md',
  clusterName: 'c1',
  pools: ['workers'],
  machines: ['w-1', 'w-2'],
};

/** w-1 on 1.0.0 (d10), w-2 on 0.9.0 (d09); 1.1.0 (d11) carries v1.35.0 as `over` says. */
async function rig(over: Partial<Release>, requireSignature?: boolean) {
  const store = new MemoryOperatorStore();
  await store.putMachine(w1);
  await store.putMachine(worker('w-2', 'workers'));
  const seen = new Map<string, Observation>([
    ['w-1', { at: 1, status: idle(d10) }],
    ['w-2', { at: 1, status: { ...idle(d09, null, 'w-2'), version: '0.9.0' } }],
  ]);
  const releases = [
    { ...release('1.1.0', d11), kubernetesVersion: 'v1.35.0', ...over },
    release('1.0.0', d10),
    release('0.9.0', d09),
  ];
  const updates = moltUpdates({
    store,
    releases: () => Promise.resolve(releases),
    pools: () => pools,
    clusters: { 'demo/c1': ['workers'] },
    machines: new FakeCapiMachines(),
    observed: (m) => seen.get(m),
    now: () => 5_000,
    ...(requireSignature !== undefined && { requireSignature }),
  });
  return { store, seen, updates };
}

describe('the release of an in-place update', () => {
  it('is refused unsigned when the operator requires signatures: no patch, nothing recorded', async () => {
    const { store, updates } = await rig({ signature: { status: 'unchecked' } }, true);
    assert.equal(await updates.releaseFor('v1.35.0', w1Machine), undefined);
    const answer = await updates.update(w1Machine, 'v1.35.0');
    assert.equal(answer.state, 'failed');
    assert.match(answer.message, /signature not checked/);
    assert.deepEqual((await store.read()).rollouts, []);
    const signed = await rig({ signature: verified }, true);
    assert.equal(await signed.updates.releaseFor('v1.35.0', w1Machine), '1.1.0');
  });

  it("starts from the Machine's own machine, and for a MachineSet from its Machines' oldest", async () => {
    const { updates } = await rig({ upgradeFrom: '>=1.0.0' });
    assert.equal(await updates.releaseFor('v1.35.0', w1Machine), '1.1.0');
    assert.equal(await updates.releaseFor('v1.35.0', set), undefined, 'w-2 on 0.9.0 is excluded');
    // w-2 is in the pool but not in this set: it does not count.
    const w1Only = { ...set, machines: ['w-1'] };
    assert.equal(await updates.releaseFor('v1.35.0', w1Only), '1.1.0');
    assert.equal(await (await rig({})).updates.releaseFor('v1.35.0', set), '1.1.0');
  });

  it('is none for a machine whose agent has not answered', async () => {
    const { seen, store, updates } = await rig({});
    seen.delete('w-1');
    assert.equal(await updates.releaseFor('v1.35.0', w1Machine), undefined);
    assert.match((await updates.update(w1Machine, 'v1.35.0')).message, /not known yet/);
    assert.deepEqual((await store.read()).rollouts, []);
  });
});
