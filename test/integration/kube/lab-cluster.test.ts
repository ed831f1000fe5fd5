// SPDX-License-Identifier: Apache-2.0
// Issue 5 end to end: a lab cluster of six machines (three control-plane machines running the etcd
// cluster that holds the operator's state, three workers) that are the nodes of a real Kubernetes
// control plane — each agent plays its node's kubelet and drains its own node under molt's agent
// role — with real workloads (a Deployment and a StatefulSet, each with a PodDisruptionBudget)
// placed by the real scheduler. The real `molt operator` process, under molt's operator role (not
// admin), leader-elected through a Lease, rolls release 1.1.0 out; `kubectl get` shows it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Node,
} from '@kubernetes/client-node';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import {
  eventually,
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { moltEntry } from '../lab/harness.ts';
import { official, startLabFleet, type LabFleet } from '../../../src/lab/fleet/fleet.ts';
import { workloads, type Workloads } from '../../../src/lab/fleet/workloads.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const run = promisify(execFile);
const nodes = ['cp-1', 'cp-2', 'cp-3', 'w-1', 'w-2', 'w-3'];
const deploy = join(import.meta.dirname, '../../../deploy/kubernetes');
let cp: KubeControlPlane;
let admin: KubeConfig;
let fleet: LabFleet;
let w: Workloads;
let operator: ManagedProcess | undefined;

const kubectl = async (kubeconfig: string, ...args: string[]): Promise<string> =>
  (await run(join(cp.bins, 'kubectl'), ['--kubeconfig', kubeconfig, ...args])).stdout;

const isReady = (n: V1Node): boolean =>
  n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** What a node went through while the rollout ran, from polling the API as an observer would. */
interface NodeHistory {
  cordonedByMolt: boolean;
  notReady: boolean;
  versions: Set<string>;
}

function watchNodes(core: CoreV1Api): { stop(): Promise<Map<string, NodeHistory>> } {
  const seen = new Map(
    nodes.map((n) => [n, { cordonedByMolt: false, notReady: false, versions: new Set<string>() }]),
  );
  const state = { stopped: false };
  const done = (async () => {
    while (!state.stopped) {
      const list = await core.listNode().catch(() => ({ items: [] as V1Node[] }));
      for (const n of list.items) {
        const h = seen.get(n.metadata?.name ?? '');
        if (h === undefined) continue;
        if (n.spec?.unschedulable === true && n.metadata?.annotations?.['molt.dev/cordoned-by'])
          h.cordonedByMolt = true;
        if (!isReady(n)) h.notReady = true;
        const v = n.metadata?.labels?.['molt.dev/version'];
        if (v !== undefined) h.versions.add(v);
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  return {
    async stop() {
      state.stopped = true;
      await done;
      return seen;
    },
  };
}

async function writeOperatorConfig(): Promise<string> {
  return writeOperatorFiles(fleet, {
    pools: [
      { name: 'control-plane', channel: 'stable', policies: [{ concurrency: 1 }] },
      {
        name: 'workers',
        channel: 'stable',
        policies: [{ canary: { count: 1, soak: '1s' } }, { concurrency: 1 }],
      },
    ],
    config: {
      id: 'operator-e2e',
      kubernetes: { kubeconfig: cp.operator.kubeconfig, namespace: 'molt-system' },
    },
  });
}

before(async () => {
  cp = await startKubeControlPlane({ nodes });
  admin = await loadKubeConfig(cp.admin.kubeconfig);
  w = workloads(admin);
  for (const manifest of ['rbac.yaml', 'operator-rbac.yaml'])
    await kubectl(cp.admin.kubeconfig, 'apply', '-f', join(deploy, manifest));
  fleet = await startLabFleet({
    molt: moltArgv,
    workers: 3,
    kubernetes: (name) => ({
      kubeconfig: cp.agent(name).kubeconfig,
      labKubelet: { kubeconfig: cp.node(name).kubeconfig },
      drain: { timeoutSeconds: 120 },
    }),
  });
});

after(async () => {
  await operator?.stop(10_000);
  await fleet.stop();
  await cp.stop();
});

describe('a six-node lab cluster upgraded by molt end to end', () => {
  it('registers every lab machine as a Ready node reporting its release', async () => {
    const core = admin.makeApiClient(CoreV1Api);
    await eventually(
      async () => {
        const list = await core.listNode();
        const ready = list.items.filter(
          (n) =>
            isReady(n) &&
            n.metadata?.labels?.['molt.dev/version'] === '1.0.0' &&
            (n.spec?.taints ?? []).length === 0,
        );
        assert.deepEqual(ready.map((n) => n.metadata?.name).sort(), nodes);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  });

  it('rolls 1.1.0 out node by node through cordon, drain, reboot and uncordon, honouring the PDBs, and kubectl shows it', async (t) => {
    const core = admin.makeApiClient(CoreV1Api);
    const apps = admin.makeApiClient(AppsV1Api);
    const ns = await w.namespace('shop');
    await w.deployment(ns, 'web', 6);
    await w.statefulSet(ns, 'db', 3);
    await w.running(ns, 9);
    await w.pdb(ns, 'web', 'web', 5);
    await w.pdb(ns, 'db', 'db', 2);
    const onNodes = new Set((await w.pods(ns)).map((p) => p.spec?.nodeName));
    assert.ok(onNodes.size >= 4, `the scheduler spread the pods: ${[...onNodes].join(', ')}`);

    operator = startProcess('molt operator', process.execPath, [
      moltEntry,
      'operator',
      '--config',
      await writeOperatorConfig(),
    ]);
    await operator.waitFor(/leading as operator-e2e/, 60_000);
    const watcher = watchNodes(core);
    let fewestWeb = 6;
    let fewestDb = 3;
    let shownActive = '';
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'stable' });
    await eventually(
      async () => {
        const [web, db] = await Promise.all([
          apps.readNamespacedDeployment({ name: 'web', namespace: ns }),
          apps.readNamespacedStatefulSet({ name: 'db', namespace: ns }),
        ]);
        fewestWeb = Math.min(fewestWeb, web.status?.availableReplicas ?? 0);
        fewestDb = Math.min(fewestDb, db.status?.availableReplicas ?? 0);
        const table = await kubectl(cp.operator.kubeconfig, 'get', 'molt', '-n', 'molt-system');
        if (/\bActive\b/.test(table)) shownActive = table;
        const phases = await kubectl(
          cp.operator.kubeconfig,
          ...['get', 'rollouts.molt.dev', '-n', 'molt-system'],
          ...['-o', 'jsonpath={range .items[*]}{.status.phase}{"\\n"}{end}'],
        );
        assert.deepEqual(
          phases.trim().split('\n'),
          ['Completed', 'Completed'],
          operator?.output().slice(-1500),
        );
      },
      { timeoutMs: 600_000, intervalMs: 500 },
    );
    const history = await watcher.stop();

    for (const [name, h] of history) {
      assert.ok(h.cordonedByMolt, `${name} was cordoned by molt before its reboot`);
      assert.ok(h.notReady, `${name} went NotReady while it rebooted`);
      assert.deepEqual(
        [...h.versions].sort(),
        ['1.0.0', '1.1.0'],
        `${name} reported both releases`,
      );
    }
    for (const n of (await core.listNode()).items) {
      const name = n.metadata?.name ?? '';
      assert.ok(isReady(n), `${name} Ready`);
      assert.equal(n.metadata?.labels?.['molt.dev/version'], '1.1.0', `${name} on 1.1.0`);
      assert.notEqual(n.spec?.unschedulable, true, `${name} uncordoned`);
      assert.equal(n.metadata.annotations?.['molt.dev/cordoned-by'], undefined);
    }
    // The budgets held: never more than one pod of each workload away at once.
    assert.ok(fewestWeb >= 5, `web never fell below 5 available (fewest ${String(fewestWeb)})`);
    assert.ok(fewestDb >= 2, `db never fell below 2 available (fewest ${String(fewestDb)})`);
    await w.running(ns, 9);

    // What a user sees with kubectl, under the operator's own (least-privilege) role.
    t.diagnostic(`kubectl get molt, mid-rollout:\n${shownActive}`);
    assert.match(shownActive, /rollout\.molt\.dev\//, 'kubectl get molt showed a rollout Active');
    const rollouts = await kubectl(
      cp.operator.kubeconfig,
      'get',
      'rollouts.molt.dev',
      '-n',
      'molt-system',
    );
    assert.match(rollouts, /POOL\s+RELEASE\s+PHASE\s+PROGRESS\s+FAILED\s+AGE/);
    assert.match(rollouts, /control-plane\s+1\.1\.0\s+Completed\s+3\/3\s+0/);
    assert.match(rollouts, /workers\s+1\.1\.0\s+Completed\s+3\/3\s+0/);
    const upgrades = await kubectl(
      cp.operator.kubeconfig,
      'get',
      'nodeupgrades.molt.dev',
      '-n',
      'molt-system',
    );
    for (const name of nodes)
      assert.match(
        upgrades,
        new RegExp(`${name}\\s+\\S+\\s+\\S+\\s+1\\.1\\.0\\s+1\\.1\\.0\\s+Upgraded`),
      );
    const channels = await kubectl(
      cp.operator.kubeconfig,
      'get',
      'channels.molt.dev',
      '-n',
      'molt-system',
    );
    assert.match(channels, /stable\s+1\.1\.0\s+control-plane,workers/);
    // The operator's role may create Events but not read them back: read them as an admin would.
    const events = await kubectl(
      cp.admin.kubeconfig,
      ...['get', 'events', '-n', 'molt-system'],
      ...['-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}'],
    );
    const reasons = events.trim().split('\n');
    for (const r of ['RolloutCreated', 'MachineUpgrading', 'MachineUpgraded', 'RolloutCompleted'])
      assert.ok(reasons.includes(r), `an Event ${r} (got ${[...new Set(reasons)].join(', ')})`);
    assert.equal(reasons.filter((r) => r === 'MachineUpgraded').length, 6);
    const lease = await admin
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'molt-operator', namespace: 'molt-system' });
    assert.equal(lease.spec?.holderIdentity, 'operator-e2e', 'leader elected through the Lease');
  });
});
