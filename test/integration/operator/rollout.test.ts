// SPDX-License-Identifier: Apache-2.0
// The operator end to end (docs/adr/0005, issue 4): a lab fleet of six machines — three control-
// plane machines whose agents run a real 3-member etcd cluster, three workers — and a real
// docker-registry holding the releases. The operator (in this process, real adapters: mTLS agent
// gateway, discovery over the registry, its state and leader election in the lab's etcd) discovers 1.1.0 and rolls it
// out under the pools' policies: control plane first and one at a time, then a worker canary
// alone, a soak, and the other workers. Then a broken 1.2.0 (boots, never healthy) published to
// the workers' channel: the canary rolls back by itself, the rollout halts, nothing else starts.
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import type { Rollout } from '../../../src/core/rollout/types.ts';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { createAgentGateway } from '../../../src/operator/adapters/agent-gateway/index.ts';
import { createReleaseSource, syncInventory } from '../../../src/operator/compose.ts';
import type { MachineRecord, OperatorStore } from '../../../src/operator/ports/store.ts';
import { createEtcdLeadership } from '../../../src/operator/adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from '../../../src/operator/adapters/etcd-store/operator-store.ts';
import { startOperatorLoop, type OperatorLoop } from '../../../src/operator/runtime/loop.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import { freePort } from '../../../src/testkit/ports.ts';
import { eventually, tempDir } from '../../../src/testkit/process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import {
  startControlPlaneCluster,
  type ControlPlaneCluster,
} from '../lab/control-plane-cluster.ts';
import { createFleetPki, startLabMachine, type LabMachine } from '../lab/harness.ts';

const repo = 'molt/installer';
const official = { 'dev.molt.official': 'true' };
let registry: RunningRegistry;
let scratch: { path: string; remove: () => Promise<void> };
let cluster: ControlPlaneCluster;
const workers: (LabMachine & { readonly id: string; readonly endpoint: string })[] = [];
let store: OperatorStore;
let loop: OperatorLoop;
const log: string[] = [];
const digests = new Map<string, string>();

async function publish(version: string, labels: Record<string, string>): Promise<void> {
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  try {
    const pushed = await pushInstallerImage(client, repo, version, { version, labels });
    digests.set(version, pushed.digest);
  } finally {
    await client.close();
  }
}

async function startWorker(i: number, pki: Awaited<ReturnType<typeof createFleetPki>>) {
  const port = await freePort();
  const id = `w-${String(i)}`;
  const configFile = join(scratch.path, `${id}.yaml`);
  await writeFile(
    configFile,
    stringify({
      node: id,
      role: 'worker',
      bootloader: i % 2 === 0 ? 'systemd-boot' : 'grub',
      api: { host: '127.0.0.1', port },
      healthDeadlineSeconds: 8,
      registry: { insecure: true },
    }),
  );
  const machine = startLabMachine({
    root: join(scratch.path, id),
    bootloader: i % 2 === 0 ? 'systemd-boot' : 'grub',
    pki,
    image: `${registry.host}/${repo}:1.0.0`,
    configFile,
  });
  workers.push({ ...machine, id, endpoint: `https://127.0.0.1:${String(port)}` });
}

before(async () => {
  registry = await startRegistry();
  scratch = await tempDir('operator-e2e');
  await publish('1.0.0', { ...official, 'dev.molt.channels': 'stable,beta' });
  const pki = await createFleetPki(join(scratch.path, 'pki'));
  cluster = await startControlPlaneCluster({
    dir: scratch.path,
    pki,
    image: `${registry.host}/${repo}:1.0.0`,
  });
  for (const i of [1, 2, 3]) await startWorker(i, pki);
  for (const w of workers) await w.status();
  // The operator's state and its leader election live in the lab's etcd — the cluster whose
  // members the control-plane upgrades take down one at a time.
  store = createEtcdOperatorStore({ endpoints: cluster.endpoints });
  const machines: MachineRecord[] = [
    ...cluster.machines.map((m) => ({
      id: m.name,
      endpoint: m.apiUrl,
      role: 'control-plane' as const,
      pool: 'control-plane',
      cluster: 'lab',
      labels: {},
    })),
    ...workers.map((w) => ({
      id: w.id,
      endpoint: w.endpoint,
      role: 'worker' as const,
      pool: 'workers',
      cluster: 'lab',
      labels: {},
    })),
  ];
  await syncInventory(store, machines);
  const read = (f: string): Promise<string> => readFile(join(pki.dir, f), 'utf8');
  const agents = createAgentGateway({
    ca: await read('ca.pem'),
    cert: await read('operator.pem'),
    key: await read('operator.key'),
  });
  loop = startOperatorLoop(
    {
      store,
      agents,
      releases: createReleaseSource({ registry: registry.host, repository: repo, insecure: true }),
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
              { kind: 'canary', count: 1, soakMs: 2_000 },
              { kind: 'concurrency', limit: { count: 1 } },
              { kind: 'failure-budget', maxFailed: 1 },
            ],
          },
        ],
        fleetPolicies: [{ kind: 'control-plane-first' }],
        imageFor: (digest) => `${registry.host}/${repo}@${digest}`,
        unreachableFailMs: 120_000,
        discoverEveryMs: 1_000,
      },
      now: () => Date.now(),
      log: (line) => log.push(line),
    },
    createEtcdLeadership({ endpoints: cluster.endpoints, id: 'operator-1', ttlSeconds: 5 }),
    { intervalMs: 500 },
  );
});

after(async () => {
  await loop.stop();
  await store.close();
  for (const w of workers) await w.stop();
  await (cluster as ControlPlaneCluster | undefined)?.stop();
  await registry.stop();
  await scratch.remove();
});

async function rolloutTo(version: string, pool: string): Promise<Rollout | undefined> {
  return (await store.read()).rollouts.find(
    (r) => r.pool === pool && r.target.digest === digests.get(version),
  );
}

const interval = (r: Rollout, id: string): [number, number] => {
  const p = r.machines[id];
  assert.ok(p?.startedAt !== undefined && p.finishedAt !== undefined, `${id} ran in ${r.id}`);
  return [p.startedAt, p.finishedAt];
};

describe('molt operator on a six-machine lab fleet', () => {
  it('rolls a new release out: control plane first and one at a time, then a worker canary, then the rest', async () => {
    await publish('1.1.0', { ...official, 'dev.molt.channels': 'stable,beta' });
    const done = await eventually(
      async () => {
        const [cp, w] = [
          await rolloutTo('1.1.0', 'control-plane'),
          await rolloutTo('1.1.0', 'workers'),
        ];
        assert.equal(cp?.state, 'Completed', log.slice(-5).join('\n'));
        assert.equal(w?.state, 'Completed', log.slice(-5).join('\n'));
        return { cp, w };
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    const cpIntervals = cluster.machines
      .map((m) => interval(done.cp, m.name))
      .sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < cpIntervals.length; i++)
      assert.ok(
        cpIntervals[i]![0] >= cpIntervals[i - 1]![1],
        'one control-plane machine at a time',
      );
    const cpDone = Math.max(...cpIntervals.map((x) => x[1]));
    const wIntervals = workers.map((w) => interval(done.w, w.id)).sort((a, b) => a[0] - b[0]);
    assert.ok(wIntervals[0]![0] >= cpDone, 'workers only after the whole control plane');
    for (const later of wIntervals.slice(1))
      assert.ok(
        later[0] >= wIntervals[0]![1] + 2_000,
        'the rest only after the canary and its soak',
      );
    for (const m of [...cluster.machines, ...workers]) {
      const s = await m.status();
      assert.equal(s.version, '1.1.0');
      assert.equal(s.boot.committed, s.bootedSlot);
    }
  });

  it('halts a rollout whose canary never becomes healthy; the canary rolls back, no other machine starts', async () => {
    await publish('1.2.0', {
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
    await new Promise((r) => setTimeout(r, 3_000)); // a few more passes: still nothing starts
    assert.equal(Object.keys((await rolloutTo('1.2.0', 'workers'))!.machines).length, 1);
    assert.equal(await rolloutTo('1.2.0', 'control-plane'), undefined, 'not in the stable channel');
    for (const w of workers) {
      const s = await w.status();
      assert.equal(
        s.version,
        '1.1.0',
        `${w.id} (canary ${canary}) is back on the previous release`,
      );
      assert.equal(s.boot.committed, s.bootedSlot);
    }
  });
});
