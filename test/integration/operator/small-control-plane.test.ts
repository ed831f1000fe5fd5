// SPDX-License-Identifier: Apache-2.0
// A small control plane: two control-plane lab machines whose agents run a real
// 2-member etcd cluster, and an operator (in this process, real adapters; its store in an etcd of
// its own, since the cluster's loses quorum on purpose here). Release 1.1.0 in `stable`: without
// the cluster setting the rollout is made but its machines wait (`SmallControlPlane`) and nothing
// is touched; with `smallControlPlane: accept-downtime` (the fleet file changed; the operator's
// next pass reads it) they upgrade one at a time — each agent told the loss of quorum is accepted — and the
// cluster comes back with both members voting and serving linearizable reads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClusterPolicy, Pool, Rollout } from '../../../src/core/rollout/types.ts';
import { plan } from '../../../src/core/rollout/plan.ts';
import { createAgentEventSource } from '../../../src/operator/adapters/agent-gateway/events.ts';
import { createAgentGateway } from '../../../src/operator/adapters/agent-gateway/index.ts';
import { createEtcdLeadership } from '../../../src/operator/adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from '../../../src/operator/adapters/etcd-store/operator-store.ts';
import { createReleaseSource, syncInventory } from '../../../src/operator/compose.ts';
import { fleetSnapshot } from '../../../src/operator/decide/snapshot.ts';
import type { OperatorStore } from '../../../src/operator/ports/store.ts';
import type { Observation } from '../../../src/operator/decide/observation.ts';
import type { OperatorLoop } from '../../../src/operator/loop/loop.ts';
import { startWatchedLoop } from '../../../src/operator/loop/watch.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import {
  official,
  repository,
  startLabFleet,
  type LabFleet,
} from '../../../src/lab/fleet/fleet.ts';
import { waitClusterHealthy } from '../../../src/lab/fleet/control-plane.ts';
import { startEtcd, type EtcdCluster } from '../../../src/lab/services/etcd.ts';
import { operatorIdentity } from './lab-operator.ts';
import { afterPasses } from '../../../src/testkit/reconcile-passes.ts';
import { maxOverlap, ranAt } from '../../../src/testkit/rollout-timing.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

let fleet: LabFleet;
let storeEtcd: EtcdCluster;
let store: OperatorStore;
let loop: OperatorLoop | undefined;
let events: ReturnType<typeof createAgentEventSource>;
let agents: ReturnType<typeof createAgentGateway>;
const log: string[] = [];
const pools: Pool[] = [
  {
    name: 'control-plane',
    channel: 'stable',
    policies: [{ kind: 'concurrency', limit: { count: 1 } }],
  },
];

before(async () => {
  fleet = await startLabFleet({ molt: moltArgv, workers: 0, controlPlaneSize: 2 });
  await waitClusterHealthy(fleet.cluster.endpoints);
  storeEtcd = await startEtcd();
  store = createEtcdOperatorStore({ endpoints: storeEtcd.endpoints });
  await syncInventory(store, fleet.machines);
  const identity = await operatorIdentity(fleet);
  agents = createAgentGateway(identity);
  events = createAgentEventSource(identity);
});

after(async () => {
  await loop?.stop();
  await events.close();
  await agents.close();
  await store.close();
  await storeEtcd.stop();
  await fleet.stop();
});

/** The fleet file's cluster settings, as the operator's next pass reads them. */
let clusters: ClusterPolicy[] = [];

/** The operator on the fleet; each pass reads `clusters` (a fleet-file change). */
function startOperator(): OperatorLoop {
  const registry = fleet.registry.host;
  return startWatchedLoop(
    {
      store,
      agents,
      releases: createReleaseSource({ registry, repository, insecure: true }),
      settings: {
        pools,
        fleetPolicies: [],
        get clusters() {
          return clusters;
        },
        imageFor: (digest) => `${registry}/${repository}@${digest}`,
        unreachableFailMs: 120_000,
        discoverEveryMs: 1_000,
      },
      now: () => Date.now(),
      log: (line) => log.push(line),
    },
    events,
    createEtcdLeadership({ endpoints: storeEtcd.endpoints, id: 'operator-1', ttlSeconds: 5 }),
    { intervalMs: 500 },
  );
}

async function theRollout(): Promise<Rollout | undefined> {
  return (await store.read()).rollouts.find((r) => r.target.digest === fleet.digest('1.1.0'));
}

describe('a 2-member control plane', () => {
  it('waits without the cluster setting: the rollout is made, no machine starts', async () => {
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'stable' });
    const operator = startOperator();
    loop = operator;
    const r = await eventually(
      async () => {
        const found = await theRollout();
        assert.ok(found !== undefined, log.slice(-5).join('\n'));
        return found;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    await afterPasses(operator, 3); // passes go by: still nothing
    assert.deepEqual((await theRollout())?.machines, {}, 'no machine started');
    const stored = await store.read();
    const seen = new Map<string, Observation>();
    for (const m of fleet.cluster.machines)
      seen.set(m.name, { at: Date.now(), status: await m.status() });
    const snapshot = fleetSnapshot(
      stored,
      { agent: (id) => seen.get(id), gates: {} },
      { pools, fleetPolicies: [] },
    );
    const waits = plan(snapshot, Date.now()).decisions.filter((d) => d.rollout === r.id);
    assert.deepEqual(
      waits.map((d) => d.reason?.code),
      ['SmallControlPlane', 'SmallControlPlane'],
    );
    for (const m of fleet.cluster.machines)
      assert.equal((await m.status()).version, '1.0.0', `${m.name} untouched`);
  });

  it('upgrades one member at a time under accept-downtime, and etcd comes back whole', async () => {
    clusters = [{ name: 'lab', smallControlPlane: 'accept-downtime' }];
    const done = await eventually(
      async () => {
        const r = await theRollout();
        assert.equal(r?.state, 'Completed', log.slice(-8).join('\n'));
        return r;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    const runs = Object.entries(done.machines).map(([id, p]) => {
      assert.equal(p.phase, 'Succeeded', `${id}: ${p.reason ?? ''}`);
      return ranAt(done, id);
    });
    assert.equal(runs.length, 2);
    assert.equal(maxOverlap(runs), 1, 'one control-plane machine at a time');
    for (const m of fleet.cluster.machines) {
      const s = await m.status();
      assert.equal(s.version, '1.1.0', `${m.name} upgraded`);
      assert.equal(s.boot.committed, s.bootedSlot, `${m.name} committed`);
    }
    await waitClusterHealthy(fleet.cluster.endpoints);
    assert.ok(
      (await store.history()).some((e) => e.kind === 'machine-start'),
      'the starts are in the history',
    );
  });
});
