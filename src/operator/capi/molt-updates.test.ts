// SPDX-License-Identifier: Apache-2.0
// molt's in-place updates of CAPI Machines over the memory store and the fake management cluster
// (docs/adr/0014): which Machine is which molt machine — only from molt's own read of the Machine
// and the Cluster → pool mapping, never from what a request says — the release for a version per
// pool, and UpdateMachine recorded once and answered from the targeted rollout and the agent's
// boot; then through the hook itself, forged requests included.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Pool } from '../../core/rollout/types.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { d10, d11, idle, release, w1 } from '../decide/fixtures.test.ts';
import type { Observation } from '../decide/observation.ts';
import { FakeCapiMachines } from '../ports/capi-machines.fake.ts';
import type { CapiMachineRef, ManagedMachine } from '../ports/in-place-updates.ts';
import type { MachineRecord } from '../ports/store.ts';
import { CanUpdateMachineSetRequest } from '../../protocol/capi-hooks.ts';
import { updateMachineRequest } from '../../testkit/capi-requests.ts';
import { canUpdateMachineSet, updateMachine, type HookDeps } from './answers.ts';
import { machineStatus } from './machine-status.ts';
import { moltUpdates } from './molt-updates.ts';

const pools: Pool[] = [
  { name: 'workers', channel: 'stable', policies: [] },
  { name: 'prod-cp', channel: 'stable', policies: [] },
];
const releases = [
  { ...release('1.1.0', d11), kubernetesVersion: 'v1.35.0' },
  { ...release('1.0.0', d10), kubernetesVersion: 'v1.34.2' },
];
const prodCp1: MachineRecord = { ...w1, id: 'prod-cp-1', role: 'control-plane', pool: 'prod-cp' };
const ref = (over: Partial<CapiMachineRef> = {}): CapiMachineRef => ({
  kind: 'Machine',
  namespace: 'demo',
  name: 'c1-md-x',
  clusterName: 'c1',
  ...over,
});
const annotated = (id: string) => ({ annotations: { 'molt.dev/machine': id } });
const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`testdata/${name}.json`, import.meta.url), 'utf8'));

async function rig() {
  const store = new MemoryOperatorStore();
  await store.putMachine(w1);
  await store.putMachine(prodCp1);
  const seen = new Map<string, Observation>([
    ['w-1', { at: 1, status: idle(d10) }],
    ['prod-cp-1', { at: 1, status: idle(d10, null, 'prod-cp-1') }],
  ]);
  const capi = new FakeCapiMachines();
  // What the management cluster holds: w-1's Machine in Cluster demo/c1, prod-cp-1's in prod/main.
  capi.add('demo/c1-md-x', { ...annotated('w-1'), version: 'v1.35.0', machineSet: 'c1-md-1' });
  capi.add('prod/main-cp-0', {
    providerID: 'molt://prod-cp-1',
    clusterName: 'main',
    controlPlane: true,
    version: 'v1.35.0',
  });
  const updates = moltUpdates({
    store,
    releases: () => Promise.resolve(releases),
    pools: () => pools,
    clusters: { 'demo/c1': ['workers'], 'prod/main': ['prod-cp'] },
    machines: capi,
    observed: (m) => seen.get(m),
    now: () => 5_000,
  });
  return { store, seen, capi, updates };
}

const request = updateMachineRequest;

const machineOf = async (
  updates: Awaited<ReturnType<typeof rig>>['updates'],
  r: CapiMachineRef,
): Promise<ManagedMachine> => {
  const out = await updates.resolve(r);
  assert.ok('managed' in out && out.managed.kind === 'Machine', JSON.stringify(out));
  return out.managed;
};

describe('moltUpdates', () => {
  it("maps a Machine by its own annotation or providerID, in a Cluster mapped to the machine's pool; a MachineSet by its Machines", async () => {
    const { capi, updates } = await rig();
    assert.deepEqual(await machineOf(updates, ref()), {
      kind: 'Machine',
      namespace: 'demo',
      name: 'c1-md-x',
      machine: 'w-1',
      pool: 'workers',
      controlPlane: false,
      version: 'v1.35.0',
      uid: 'uid-c1-md-x',
    });
    const cp = await machineOf(updates, ref({ namespace: 'prod', name: 'main-cp-0' }));
    assert.deepEqual([cp.machine, cp.controlPlane], ['prod-cp-1', true]);
    // Named like a molt machine, mapped to nothing: not by name.
    capi.add('demo/w-1');
    assert.match(
      JSON.stringify(await updates.resolve(ref({ name: 'w-1' }))),
      /names no molt machine/,
    );
    assert.match(
      JSON.stringify(await updates.resolve(ref({ name: 'gone' }))),
      /not on the management cluster/,
    );
    const set = await updates.resolve(ref({ kind: 'MachineSet', name: 'c1-md-1' }));
    assert.ok('managed' in set && set.managed.kind === 'MachineSet', JSON.stringify(set));
    assert.deepEqual([set.managed.pools, set.managed.machines], [['workers'], ['w-1']]);
    // A tenant's set whose Machine names w-1 (its Cluster tenant-a/c1 is not mapped); a set with
    // a Machine that is no molt machine; a set with no Machines.
    capi.add('tenant-a/decoy', { ...annotated('w-1'), machineSet: 'c1-md-1' });
    capi.add('demo/plain-0', { machineSet: 'c1-md-2' });
    capi.add('demo/plain-1', { ...annotated('w-1'), machineSet: 'c1-md-2' });
    for (const [other, why] of [
      [
        { namespace: 'tenant-a', name: 'c1-md-1' },
        /Cluster tenant-a\/c1, which capi.clusters does not map/,
      ],
      [{ name: 'c1-md-2' }, /plain-0 names no molt machine/],
      [{ name: 'c1-md-3' }, /has no Machines/],
    ] as const)
      assert.match(
        JSON.stringify(await updates.resolve(ref({ kind: 'MachineSet', ...other }))),
        why,
      );
  });

  it("checks a MachineSet's release against its own Machines only, not every pool of its Cluster", async () => {
    const store = new MemoryOperatorStore();
    await store.putMachine(w1);
    // The Cluster's control plane, already on 1.1.0 (CAPI moves it first), and a replace pool
    // on another channel: neither is a Machine of the MachineDeployment's set.
    await store.putMachine({ ...prodCp1, id: 'cp-1', pool: 'control-plane' });
    await store.putMachine({ ...w1, id: 'w-4', pool: 'replaced' });
    const seen = new Map<string, Observation>([
      ['w-1', { at: 1, status: idle(d10) }],
      ['cp-1', { at: 1, status: idle(d11, null, 'cp-1') }],
      ['w-4', { at: 1, status: idle(d10, null, 'w-4') }],
    ]);
    const capi = new FakeCapiMachines();
    capi.add('demo/c1-md-qbjnv-mn4b6', { ...annotated('w-1'), machineSet: 'c1-md-qbjnv' });
    capi.add('demo/c1-cp-85mnm', { ...annotated('cp-1'), controlPlane: true });
    capi.add('demo/c1-md3-x', { ...annotated('w-4'), machineSet: 'c1-md3-y' });
    const updates = moltUpdates({
      store,
      releases: () => Promise.resolve(releases),
      pools: () => [
        { name: 'workers', channel: 'stable', policies: [] },
        { name: 'control-plane', channel: 'stable', policies: [] },
        { name: 'replaced', channel: 'edge', strategy: 'replace', policies: [] },
      ],
      clusters: { 'demo/c1': ['workers', 'control-plane', 'replaced'] },
      machines: capi,
      observed: (m) => seen.get(m),
      now: () => 5_000,
    });
    // CAPI's own request: the current MachineSet (its Machines) and the new one it would move them to.
    const answer = await canUpdateMachineSet(
      CanUpdateMachineSetRequest.parse(fixture('canupdatemachineset.md-version.request')),
      { updates, releaseForVersion: (v, m) => updates.releaseFor(v, m) },
    );
    assert.ok(answer.machineSetPatch, answer.message);
    assert.match(answer.message ?? '', /release 1\.1\.0/);
    // The replace pool's own set gets none: 1.1.0 is not on its channel.
    const replaced = await updates.resolve(ref({ kind: 'MachineSet', name: 'c1-md3-y' }));
    assert.ok('managed' in replaced);
    assert.equal(await updates.releaseFor('v1.35.0', replaced.managed), undefined);
  });

  it("names the release carrying the version in the machine's pool, and none for another", async () => {
    const { updates } = await rig();
    const m = await machineOf(updates, ref());
    assert.equal(await updates.releaseFor('v1.35.0', m), '1.1.0');
    assert.equal(await updates.releaseFor('v1.36.0', m), undefined);
  });

  it('records one targeted rollout, answers in progress until the agent boots the release, then done', async () => {
    const { store, seen, updates } = await rig();
    const m = await machineOf(updates, ref());
    assert.equal((await updates.update(m, 'v1.35.0')).state, 'in-progress');
    assert.equal((await updates.update(m, 'v1.35.0')).state, 'in-progress');
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
    const answer = await updateMachine(request('demo', 'c1-md-x'), {
      updates,
      releaseForVersion: (v, r) => updates.releaseFor(v, r),
    });
    assert.deepEqual([answer.status, answer.retryAfterSeconds], ['Success', 0]);
  });

  it('answers failed, recording nothing, for a version no release carries', async () => {
    const { store, updates } = await rig();
    const out = await updates.update(await machineOf(updates, ref()), 'v1.36.0');
    assert.equal(out.state, 'failed');
    assert.deepEqual((await store.read()).rollouts, []);
  });
});

describe('forged hook calls', () => {
  async function hook() {
    const r = await rig();
    const lines: string[] = [];
    const deps: HookDeps = {
      updates: r.updates,
      releaseForVersion: (v, m) => r.updates.releaseFor(v, m),
      status: machineStatus({
        machines: r.capi,
        onFailure: 'remediate',
        now: () => 0,
        log: (l) => lines.push(l),
      }),
    };
    return { ...r, deps, lines };
  }

  it("records no rollout for a decoy Machine annotated with a production machine's id", async () => {
    const { store, capi, deps } = await hook();
    // A tenant's Machine in its own namespace, and one in prod's namespace for another Cluster.
    capi.add('tenant-a/decoy', { ...annotated('prod-cp-1'), version: 'v1.34.2' });
    capi.add('prod/decoy', { ...annotated('prod-cp-1'), clusterName: 'side', version: 'v1.34.2' });
    for (const [namespace, clusterName] of [
      ['tenant-a', 'c1'],
      ['prod', 'side'],
      ['prod', 'main'], // the request lies about its Cluster: the read says side
    ] as const) {
      const a = await updateMachine(
        request(namespace, 'decoy', {
          version: 'v1.34.2',
          clusterName,
          annotations: { 'molt.dev/machine': 'prod-cp-1' },
        }),
        deps,
      );
      assert.equal(a.status, 'Failure');
      assert.match(a.message ?? '', /molt does not manage Machine .*decoy.*nothing changed/);
    }
    assert.deepEqual((await store.read()).rollouts, []);
    assert.deepEqual([capi.writes, capi.remediations], [[], []]);
  });

  it("takes the molt machine from the Machine as read, not from the request's annotation", async () => {
    const { store, deps } = await hook();
    // demo/c1-md-x is w-1's Machine; the request claims it is prod-cp-1's.
    const a = await updateMachine(
      request('demo', 'c1-md-x', { annotations: { 'molt.dev/machine': 'prod-cp-1' } }),
      deps,
    );
    assert.equal(a.status, 'Success', a.message);
    assert.deepEqual(
      (await store.read()).rollouts.map((r) => r.id),
      ['capi-w-1-v1.35.0'],
    );
  });

  it('refuses a version the Machine on the management cluster does not want (a forged downgrade)', async () => {
    const { store, deps } = await hook();
    const a = await updateMachine(request('prod', 'main-cp-0', { version: 'v1.34.2' }), deps);
    assert.equal(a.status, 'Failure');
    assert.match(
      a.message ?? '',
      /at spec\.version v1\.35\.0 on the management cluster, not v1\.34\.2/,
    );
    assert.deepEqual((await store.read()).rollouts, []);
  });

  it('refuses a version for a Machine that wants none on the management cluster (the caller would choose it)', async () => {
    const { store, capi, deps } = await hook();
    capi.add('demo/c1-md-x', { ...annotated('w-1'), machineSet: 'c1-md-1' });
    const a = await updateMachine(request('demo', 'c1-md-x', { version: 'v1.35.0' }), deps);
    assert.equal(a.status, 'Failure');
    assert.match(a.message ?? '', /names no spec\.version on the management cluster/);
    assert.deepEqual((await store.read()).rollouts, []);
  });

  it('remediates only the Machine molt resolved, as the control plane the read says it is', async () => {
    const { store, capi, deps, updates } = await hook();
    // prod-cp-1's update failed on the machine: it rolled back.
    await updates.update(
      await machineOf(updates, ref({ namespace: 'prod', name: 'main-cp-0' })),
      'v1.35.0',
    );
    const id = 'capi-prod-cp-1-v1.35.0';
    assert.ok((await store.read()).rollouts.some((r) => r.id === id));
    await store.updateRollout(id, (r) => ({
      ...r,
      state: 'Halted',
      machines: { 'prod-cp-1': { phase: 'RolledBack', startedAt: 1, finishedAt: 2 } },
    }));
    // Forged: any Machine, the control-plane label left out, named for the failed update.
    capi.add('prod/db-0', { version: 'v1.35.0', clusterName: 'main' });
    const forged = await updateMachine(request('prod', 'db-0', { clusterName: 'main' }), deps);
    assert.equal(forged.status, 'Failure');
    assert.equal(
      capi.machines.get('prod/db-0')?.deleted,
      false,
      'the forged Machine is not deleted',
    );
    // The real Machine's call, without its control-plane label in the request: annotated for KCP,
    // not deleted — the read says it is KCP's.
    const real = await updateMachine(request('prod', 'main-cp-0', { clusterName: 'main' }), deps);
    assert.equal(real.status, 'Failure');
    assert.deepEqual(capi.remediations, [{ machine: 'prod/main-cp-0', how: 'annotated' }]);
    assert.deepEqual(
      capi.writes.map((w) => [w.machine, w.condition.reason]),
      [['prod/main-cp-0', 'RolledBack']],
    );
  });

  it('answers Failure (CAPI asks again), never "not managed", when the Machine cannot be read', async () => {
    const { capi, deps } = await hook();
    capi.fail = true;
    const a = await updateMachine(request('demo', 'c1-md-x'), deps);
    assert.equal(a.status, 'Failure');
    assert.match(a.message ?? '', /molt could not read Machine demo\/c1-md-x/);
  });
});
