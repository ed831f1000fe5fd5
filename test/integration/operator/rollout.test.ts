// SPDX-License-Identifier: Apache-2.0
// The operator end to end (docs/adr/0005): a lab fleet of six machines — three control-
// plane machines whose agents run a real 3-member etcd cluster, three workers — and a real
// docker-registry holding the releases. The operator (in this process, real adapters: mTLS agent
// gateway, discovery over the registry, its state and leader election in the lab's etcd — the
// cluster whose members the control-plane upgrades take down one at a time) discovers 1.1.0 and
// rolls it out: control plane first and one at a time, then a worker canary alone, a soak, and the
// other workers. Then a broken 1.2.0 (boots, never healthy) published to the workers' channel:
// the canary rolls back by itself, the rollout halts, nothing else starts, and 1.2.0 is blocked
// for the workers. Last, the completed
// 1.1.0 rollout of the workers is rolled back fleet-wide to the 1.0.0 it recorded as `from`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Rollout } from '../../../src/core/rollout/types.ts';
import { rollbackRolloutOf } from '../../../src/operator/decide/fleet-rollback.ts';
import { createAgentEventSource } from '../../../src/operator/adapters/agent-gateway/events.ts';
import { createAgentGateway } from '../../../src/operator/adapters/agent-gateway/index.ts';
import { createEtcdLeadership } from '../../../src/operator/adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from '../../../src/operator/adapters/etcd-store/operator-store.ts';
import { createReleaseSource, syncInventory } from '../../../src/operator/compose.ts';
import type { OperatorStore } from '../../../src/operator/ports/store.ts';
import type { OperatorLoop } from '../../../src/operator/loop/loop.ts';
import { startWatchedLoop } from '../../../src/operator/loop/watch.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import {
  official,
  repository,
  startLabFleet,
  type LabFleet,
} from '../../../src/lab/fleet/fleet.ts';
import { operatorIdentity } from './lab-operator.ts';
import { afterPasses } from '../../../src/testkit/reconcile-passes.ts';
import { maxOverlap, ranAt } from '../../../src/testkit/rollout-timing.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

let fleet: LabFleet;
let store: OperatorStore;
let loop: OperatorLoop;
let events: ReturnType<typeof createAgentEventSource>;
const log: string[] = [];
const canarySoakMs = 2_000;

before(async () => {
  fleet = await startLabFleet({ molt: moltArgv, workers: 3 });
  const endpoints = fleet.cluster.endpoints;
  store = createEtcdOperatorStore({ endpoints });
  await syncInventory(store, fleet.machines);
  const identity = await operatorIdentity(fleet);
  const agents = createAgentGateway(identity);
  events = createAgentEventSource(identity);
  const registry = fleet.registry.host;
  loop = startWatchedLoop(
    {
      store,
      agents,
      releases: createReleaseSource({ registry, repository, insecure: true }),
      settings: {
        pools: [
          {
            name: 'control-plane',
            channel: 'stable',
            policies: [{ kind: 'concurrency', limit: { count: 1 } }],
          },
          {
            name: 'workers',
            channel: 'beta',
            policies: [
              { kind: 'canary', count: 1, soakMs: canarySoakMs },
              { kind: 'concurrency', limit: { count: 1 } },
              { kind: 'failure-budget', maxFailed: 1 },
            ],
          },
        ],
        fleetPolicies: [{ kind: 'control-plane-first' }],
        imageFor: (digest) => `${registry}/${repository}@${digest}`,
        unreachableFailMs: 120_000,
        discoverEveryMs: 1_000,
      },
      now: () => Date.now(),
      log: (line) => log.push(line),
    },
    events,
    createEtcdLeadership({ endpoints, id: 'operator-1', ttlSeconds: 5 }),
    { intervalMs: 500 },
  );
});

after(async () => {
  await loop.stop();
  await events.close();
  await store.close();
  await fleet.stop();
});

async function rolloutTo(version: string, pool: string): Promise<Rollout | undefined> {
  return (await store.read()).rollouts.find(
    (r) => r.pool === pool && r.target.digest === fleet.digest(version),
  );
}

describe('molt operator on a six-machine lab fleet', () => {
  it('rolls a new release out: control plane first and one at a time, then a worker canary, then the rest', async () => {
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'stable,beta' });
    const done = await eventually(
      async () => {
        const cp = await rolloutTo('1.1.0', 'control-plane');
        const w = await rolloutTo('1.1.0', 'workers');
        assert.equal(cp?.state, 'Completed', log.slice(-5).join('\n'));
        assert.equal(w?.state, 'Completed', log.slice(-5).join('\n'));
        return { cp, w };
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    const cp = fleet.cluster.machines.map((m) => ranAt(done.cp, m.name));
    assert.equal(maxOverlap(cp), 1, 'one control-plane machine at a time');
    const cpDone = Math.max(...cp.map((x) => x[1]));
    const workers = fleet.workers.map((w) => ranAt(done.w, w.id)).sort((a, b) => a[0] - b[0]);
    assert.ok(workers[0]![0] >= cpDone, 'workers only after the whole control plane');
    for (const later of workers.slice(1))
      assert.ok(later[0] >= workers[0]![1] + canarySoakMs, 'the rest only after the canary soaked');
    assert.equal(maxOverlap(workers), 1, 'workers one at a time');
    for (const m of fleet.all) {
      const s = await m.status();
      assert.equal(s.version, '1.1.0');
      assert.equal(s.boot.committed, s.bootedSlot);
    }
  });

  it('halts a rollout whose canary never becomes healthy; the canary rolls back, no other machine starts', async () => {
    await fleet.publish('1.2.0', {
      ...official,
      'dev.molt.channels': 'beta',
      'dev.molt.lab.health': 'never',
    });
    const halted = await eventually(
      async () => {
        const r = await rolloutTo('1.2.0', 'workers');
        assert.equal(r?.state, 'Halted', log.slice(-5).join('\n'));
        return r;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    const progressed = Object.entries(halted.machines);
    assert.equal(progressed.length, 1, 'only the canary started');
    const [canary, p] = progressed[0]!;
    assert.equal(p.phase, 'RolledBack', p.reason);
    await afterPasses(loop, 3); // a few more passes: still nothing starts
    assert.equal(Object.keys((await rolloutTo('1.2.0', 'workers'))!.machines).length, 1);
    assert.equal(await rolloutTo('1.2.0', 'control-plane'), undefined, 'not in the stable channel');
    // Blocked for the workers in the store (etcd), so no later scan offers it to them again.
    const blocks = (await store.read()).blocks;
    assert.deepEqual(
      blocks.map((b) => [b.digest, b.pool, b.by, b.rollout]),
      [[fleet.digest('1.2.0'), 'workers', 'operator', halted.id]],
    );
    for (const w of fleet.workers) {
      const s = await w.status();
      assert.equal(s.version, '1.1.0', `${w.id} (canary ${canary}) is on the previous release`);
      assert.equal(s.boot.committed, s.bootedSlot);
    }
  });

  it('rolls the completed 1.1.0 rollout of the workers back to the 1.0.0 it came from', async () => {
    const original = await rolloutTo('1.1.0', 'workers');
    assert.equal(original?.state, 'Completed');
    assert.deepEqual(original.from, { version: '1.0.0', digest: fleet.digest('1.0.0') });
    // What `molt rollout rollback` writes first (actions/rollback.ts): a new rollout back to
    // `from`. The loop ends the original RolledBack and blocks its release on its own.
    const back = rollbackRolloutOf(original, Date.now());
    await store.createRollout(back);
    await eventually(
      async () => {
        const stored = await store.read();
        const r = stored.rollouts.find((x) => x.id === back.id);
        assert.equal(r?.state, 'Completed', log.slice(-5).join('\n'));
        assert.equal(r.rollbackOf, original.id, 'the store kept what it reverses');
        const reversed = stored.rollouts.find((x) => x.id === original.id);
        assert.equal(reversed?.state, 'RolledBack');
        assert.ok(
          stored.blocks.some((b) => b.digest === original.target.digest && b.pool === 'workers'),
        );
      },
      { timeoutMs: 240_000, intervalMs: 1_000 },
    );
    const to110 = (await store.read()).rollouts.filter((x) => x.target.version === '1.1.0');
    assert.equal(to110.filter((x) => x.pool === 'workers').length, 1, 'not offered again');
    for (const w of fleet.workers) {
      const s = await w.status();
      assert.equal(s.version, '1.0.0', `${w.id} is back on 1.0.0`);
      assert.equal(s.boot.committed, s.bootedSlot);
    }
    for (const m of fleet.cluster.machines)
      assert.equal((await m.status()).version, '1.1.0', 'the control plane was not part of it');
  });
});
