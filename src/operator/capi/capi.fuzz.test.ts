// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): the Cluster API hooks' request decoding (any body, as
// a caller may send it: an answer in CAPI's shape, never a throw) and the Machine → molt machine
// mapping — whatever a request says (namespace, name, cluster, labels, annotations) and whatever
// Machines anyone created on the management cluster, molt records a rollout for, writes to and
// remediates only a Machine whose own object maps to the molt machine and whose Cluster is mapped
// to that machine's pool.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { mapMachine, type ClusterPools } from '../../core/capi/machine-map.ts';
import type { Pool } from '../../core/rollout/types.ts';
import {
  CanUpdateMachineResponse,
  CanUpdateMachineSetResponse,
  CapiHook,
  UpdateMachineResponse,
} from '../../protocol/capi-hooks.ts';
import { updateMachineRequest } from '../../testkit/capi-requests.ts';
import { fuzzJson, fuzzParameters, outcomeAsync } from '../../testkit/fuzz.ts';
import { MemoryOperatorStore } from '../adapters/memory-store/operator-store.ts';
import { d10, d11, idle, release, w1 } from '../decide/fixtures.test.ts';
import { FakeCapiMachines } from '../ports/capi-machines.fake.ts';
import { FakeInPlaceUpdates } from '../ports/in-place-updates.fake.ts';
import type { MachineRecord } from '../ports/store.ts';
import { updateMachine, type HookDeps } from './answers.ts';
import { machineStatus } from './machine-status.ts';
import { moltUpdates } from './molt-updates.ts';
import { answerHook } from './routes.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`testdata/${name}.json`, import.meta.url), 'utf8'));
const samples = [
  fixture('canupdatemachine.kcp-version.request'),
  fixture('canupdatemachineset.md-version.request'),
  fixture('updatemachine.kcp-machine.request'),
  fixture('updatemachine.md-machine.request'),
] as Parameters<typeof fuzzJson>[0];
const answers = {
  [CapiHook.CanUpdateMachine]: CanUpdateMachineResponse,
  [CapiHook.CanUpdateMachineSet]: CanUpdateMachineSetResponse,
  [CapiHook.UpdateMachine]: UpdateMachineResponse,
};

describe('fuzz: the Cluster API hooks', () => {
  it('answer any body in the hook’s response shape, never throwing', async () => {
    const deps: HookDeps = {
      updates: new FakeInPlaceUpdates({ managed: ['demo/c1-cp-85mnm', 'demo/c1-md-qbjnv-mn4b6'] }),
      releaseForVersion: (v) => (v === 'v1.35.0' ? 'molt-2.4.0' : undefined),
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.values(CapiHook)),
        fc.oneof(
          fuzzJson(samples).map((j) => JSON.stringify(j)),
          fc.string(),
        ),
        async (hook, body) => {
          const r = await outcomeAsync(() => answerHook(hook, body, deps), 'answerHook');
          assert.ok(r.ok, 'no throw');
          answers[hook].parse(r.value);
        },
      ),
      fuzzParameters(1_000),
    );
  });
});

const pools: Pool[] = ['workers', 'prod-cp', 'tenant'].map((name) => ({
  name,
  channel: 'stable',
  policies: [],
}));
const fleet: MachineRecord[] = [
  w1,
  { ...w1, id: 'prod-cp-1', role: 'control-plane', pool: 'prod-cp' },
  { ...w1, id: 't-1', pool: 'tenant' },
];
const clusters: ClusterPools = {
  'demo/c1': ['workers'],
  'prod/main': ['prod-cp'],
  'tenant-a/c1': ['tenant'],
};
const namespaces = ['demo', 'prod', 'tenant-a', 'default'];
const clusterNames = ['c1', 'main', 'side'];
const ids = [...fleet.map((m) => m.id), 'w-9', ''];

/** A Machine anyone may have created: any namespace, Cluster, and a mapping of their choosing. */
const anyMachine = fc.record({
  namespace: fc.constantFrom(...namespaces),
  name: fc.constantFrom('m-0', 'm-1', 'w-1', 'prod-cp-1'),
  clusterName: fc.constantFrom(...clusterNames),
  annotation: fc.option(fc.constantFrom(...ids), { nil: undefined }),
  providerID: fc.option(fc.constantFrom(...ids.map((i) => `molt://${i}`), 'aws:///x'), {
    nil: undefined,
  }),
  controlPlane: fc.boolean(),
  version: fc.constantFrom('v1.35.0', 'v1.34.2'),
});
/** A Machine as its Cluster's controller creates it: mapped to a fleet machine, in its pool's Cluster. */
const ownMachine = fc.constantFrom(...fleet).chain((f) =>
  fc.record({
    namespace: fc.constant(
      f.pool === 'workers' ? 'demo' : f.pool === 'prod-cp' ? 'prod' : 'tenant-a',
    ),
    name: fc.constantFrom('m-0', 'm-1', 'w-1', 'prod-cp-1'),
    clusterName: fc.constant(f.pool === 'prod-cp' ? 'main' : 'c1'),
    annotation: fc.constant(f.id),
    providerID: fc.constant(undefined),
    controlPlane: fc.boolean(),
    version: fc.constantFrom('v1.35.0', 'v1.34.2'),
  }),
);
/** A request: pointing at any Machine (often one that exists), saying anything about it. */
const anyRequest = (at: readonly { namespace: string; name: string }[]) =>
  fc.record({
    where: fc.oneof(
      fc.record({
        namespace: fc.constantFrom(...namespaces),
        name: fc.constantFrom('m-0', 'm-1', 'w-1', 'prod-cp-1', 'none'),
      }),
      ...(at.length > 0 ? [fc.constantFrom(...at)] : []),
    ),
    clusterName: fc.constantFrom(...clusterNames),
    annotation: fc.option(fc.constantFrom(...ids), { nil: undefined }),
    controlPlane: fc.boolean(),
    version: fc.constantFrom('v1.35.0', 'v1.34.2'),
  });
const world = fc
  .array(fc.oneof(anyMachine, ownMachine), { maxLength: 6 })
  .chain((machines) =>
    fc.tuple(fc.constant(machines), fc.array(anyRequest(machines), { minLength: 1, maxLength: 8 })),
  );

describe('fuzz: which Machine is which molt machine', () => {
  it('maps a Machine only to a molt machine its own object names, in a pool its Cluster is mapped to', () => {
    fc.assert(
      fc.property(anyMachine, (m) => {
        const read = {
          ...m,
          moltMachine: m.annotation === '' ? undefined : (m.annotation ?? undefined),
        };
        const out = mapMachine(read, fleet, clusters);
        if ('refused' in out) return;
        assert.equal(out.machine, read.moltMachine);
        const pool = fleet.find((f) => f.id === out.machine)?.pool;
        assert.equal(out.pool, pool);
        assert.ok(clusters[`${m.namespace}/${m.clusterName}`]?.includes(out.pool));
      }),
      fuzzParameters(2_000),
    );
  });

  it('records, writes and remediates only for a Machine that maps on the management cluster, whatever the requests say', async () => {
    await fc.assert(
      fc.asyncProperty(world, fc.boolean(), async ([machines, requests], failed) => {
        const store = new MemoryOperatorStore();
        for (const m of fleet) await store.putMachine(m);
        const capi = new FakeCapiMachines();
        for (const m of machines)
          capi.add(`${m.namespace}/${m.name}`, {
            clusterName: m.clusterName,
            controlPlane: m.controlPlane,
            version: m.version,
            ...(m.annotation !== undefined && {
              annotations: { 'molt.dev/machine': m.annotation },
            }),
            ...(m.providerID !== undefined && { providerID: m.providerID }),
          });
        const truth = new Map([...capi.machines].map(([key, m]) => [key, { ...m, key }] as const));
        const updates = moltUpdates({
          store,
          releases: () =>
            Promise.resolve([
              { ...release('1.1.0', d11), kubernetesVersion: 'v1.35.0' },
              { ...release('1.0.0', d10), kubernetesVersion: 'v1.34.2' },
            ]),
          pools: () => pools,
          clusters,
          machines: capi,
          observed: (id) => ({ at: 1, status: idle(d10, null, id) }),
          now: () => 1,
        });
        const deps: HookDeps = {
          updates,
          releaseForVersion: (v, m) => updates.releaseFor(v, m),
          status: machineStatus({
            machines: capi,
            onFailure: 'remediate',
            now: () => 0,
            log: () => undefined,
          }),
        };
        for (const r of requests) {
          await updateMachine(forged(r), deps);
          if (failed) await failAll(store);
        }
        /** Whether Machine `key` (as created) is molt machine `id`'s by its own object and Cluster. */
        const mapsTo = (key: string, id: string): boolean => {
          const m = truth.get(key);
          if (m === undefined) return false;
          const [namespace = '', name = ''] = key.split('/');
          const read = { namespace, name, clusterName: m.clusterName ?? 'c1' };
          const own = m.annotations['molt.dev/machine'] || m.providerID?.replace(/^molt:\/\//, '');
          const out = mapMachine({ ...read, moltMachine: own }, fleet, clusters);
          return 'machine' in out && out.machine === id;
        };
        const touched = [
          ...capi.writes.map((w) => w.machine),
          ...capi.remediations.map((r) => r.machine),
        ];
        for (const key of touched)
          assert.ok(
            fleet.some((f) => mapsTo(key, f.id)),
            `${key} was written to, but maps to no molt machine`,
          );
        for (const rollout of (await store.read()).rollouts)
          for (const id of rollout.only ?? [])
            assert.ok(
              [...truth.keys()].some((key) => mapsTo(key, id)),
              `a rollout of ${id} with no Machine of its own`,
            );
      }),
      fuzzParameters(300),
    );
  });
});

function forged(r: {
  where: { namespace: string; name: string };
  clusterName: string;
  annotation: string | undefined;
  controlPlane: boolean;
  version: string;
}): Parameters<typeof updateMachine>[0] {
  return updateMachineRequest(r.where.namespace, r.where.name, {
    clusterName: r.clusterName,
    version: r.version,
    ...(r.controlPlane && { labels: { 'cluster.x-k8s.io/control-plane': '' } }),
    ...(r.annotation !== undefined && { annotations: { 'molt.dev/machine': r.annotation } }),
  });
}

/** Every targeted rollout's machine rolled back: the next call remediates. */
async function failAll(store: MemoryOperatorStore): Promise<void> {
  for (const r of (await store.read()).rollouts)
    await store.updateRollout(r.id, (x) => ({
      ...x,
      state: 'Halted',
      machines: Object.fromEntries(
        (x.only ?? []).map((id) => [id, { phase: 'RolledBack', startedAt: 1, finishedAt: 2 }]),
      ),
    }));
}
