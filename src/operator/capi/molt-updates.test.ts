// SPDX-License-Identifier: Apache-2.0
// molt's in-place updates of CAPI Machines over the memory store (docs/adr/0014): which Machine is
// which molt machine, the release for a version per pool, and UpdateMachine recorded once and
// answered from the targeted rollout and the agent's boot — then through the hook itself.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pool } from '../../core/rollout/types.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { d10, d11, idle, release, w1 } from '../decide/fixtures.test.ts';
import type { Observation } from '../decide/observation.ts';
import type { CapiMachineRef } from '../ports/in-place-updates.ts';
import { updateMachine } from './answers.ts';
import { moltMachineId, moltUpdates } from './molt-updates.ts';

const pools: Pool[] = [{ name: 'workers', channel: 'stable', policies: [] }];
const releases = [
  { ...release('1.1.0', d11), kubernetesVersion: 'v1.35.0' },
  { ...release('1.0.0', d10), kubernetesVersion: 'v1.34.2' },
];
const ref = (over: Partial<CapiMachineRef> = {}): CapiMachineRef => ({
  kind: 'Machine',
  namespace: 'demo',
  name: 'w-1',
  clusterName: 'c1',
  ...over,
});

async function rig() {
  const store = new MemoryOperatorStore();
  await store.putMachine(w1);
  const seen = new Map<string, Observation>([['w-1', { at: 1, status: idle(d10) }]]);
  const updates = moltUpdates({
    store,
    releases: () => Promise.resolve(releases),
    pools: () => pools,
    clusters: { c1: 'workers' },
    observed: (m) => seen.get(m),
    now: () => 5_000,
  });
  return { store, seen, updates };
}

describe('moltUpdates', () => {
  it('maps a Machine by its molt.dev/machine annotation, else providerID molt://<id>, else by name; a MachineSet by its Cluster', async () => {
    const { updates } = await rig();
    const named = ref({ name: 'c1-md-x', providerID: 'molt://w-9', moltMachine: 'w-1' });
    assert.equal(moltMachineId(named), 'w-1');
    assert.equal(await updates.manages(named), true);
    assert.equal(moltMachineId(ref({ name: 'x', providerID: 'molt://w-1' })), 'w-1');
    assert.equal(moltMachineId(ref({ providerID: 'in-memory://x' })), 'w-1');
    assert.equal(await updates.manages(ref()), true);
    assert.equal(await updates.manages(ref({ name: 'w-9' })), false);
    assert.equal(await updates.manages(ref({ kind: 'MachineSet', name: 'md-1' })), true);
    assert.equal(await updates.manages(ref({ kind: 'MachineSet', clusterName: 'c2' })), false);
  });

  it("names the release carrying the version in the machine's pool, and none for another", async () => {
    const { updates } = await rig();
    assert.equal(await updates.releaseFor('v1.35.0', ref()), '1.1.0');
    assert.equal(await updates.releaseFor('v1.36.0', ref()), undefined);
  });

  it('records one targeted rollout, answers in progress until the agent boots the release, then done', async () => {
    const { store, seen, updates } = await rig();
    assert.equal((await updates.update(ref(), 'v1.35.0')).state, 'in-progress');
    assert.equal((await updates.update(ref(), 'v1.35.0')).state, 'in-progress');
    const { rollouts } = await store.read();
    assert.deepEqual(
      rollouts.map((r) => [r.id, r.only, r.target.digest]),
      [['capi-w-1-v1.35.0', ['w-1'], d11]],
    );
    await store.updateRollout('capi-w-1-v1.35.0', (r) => ({
      ...r,
      machines: { 'w-1': { phase: 'Succeeded', startedAt: 1, finishedAt: 2 } },
    }));
    seen.set('w-1', { at: 3, status: idle(d11) });
    const answer = await updateMachine(
      {
        apiVersion: 'hooks.runtime.cluster.x-k8s.io/v1alpha1',
        kind: 'UpdateMachineRequest',
        desired: {
          machine: {
            apiVersion: 'cluster.x-k8s.io/v1beta2',
            kind: 'Machine',
            metadata: { name: 'w-1', namespace: 'demo' },
            spec: { clusterName: 'c1', version: 'v1.35.0' },
          },
        },
      } as Parameters<typeof updateMachine>[0],
      { updates, releaseForVersion: (v, r) => updates.releaseFor(v, r) },
    );
    assert.deepEqual([answer.status, answer.retryAfterSeconds], ['Success', 0]);
  });

  it('answers failed, recording nothing, for a version no release carries', async () => {
    const { store, updates } = await rig();
    const out = await updates.update(ref(), 'v1.36.0');
    assert.equal(out.state, 'failed');
    assert.deepEqual((await store.read()).rollouts, []);
  });
});
