// SPDX-License-Identifier: Apache-2.0
// Every Kubernetes identity on a machine acts only on that machine's Node (docs/adr/0006 §13), on
// a real control plane with NodeRestriction and deploy/kubernetes/rbac.yaml applied as shipped:
// an agent's credential (molt:agent:<node>) changes its own Node and the pods on it, never another
// Node, and never its own Node's pool or role; a kubelet cannot label itself into a pool either;
// and the operator's inventory takes a Node into a pool only from the label no node can write.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { createKubeDeclared } from '../../../src/operator/adapters/kube-declared/index.ts';
import { loadKubeConfig, statusOf } from '../../../src/platform/kube/client.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { workloads } from '../../../src/lab/fleet/workloads.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';

const run = promisify(execFile);
const deploy = join(import.meta.dirname, '../../../deploy/kubernetes');
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const PoolLabel = 'node-restriction.kubernetes.io/molt-pool';
const nodes = ['n-1', 'n-2'];
let cp: KubeControlPlane;
let admin: KubeConfig;

const core = async (kubeconfig: string): Promise<CoreV1Api> =>
  (await loadKubeConfig(kubeconfig)).makeApiClient(CoreV1Api);
const agent = (node: string): Promise<CoreV1Api> => core(cp.agent(node).kubeconfig);
const kubelet = (node: string): Promise<CoreV1Api> => core(cp.node(node).kubeconfig);
const readNode = async (name: string) => (await core(cp.admin.kubeconfig)).readNode({ name });
const patch = (api: CoreV1Api, name: string, body: object) => api.patchNode({ name, body }, merge);

/** `call` is refused with 403, and the API's message matches `why`. */
async function refused(call: Promise<unknown>, why: RegExp): Promise<void> {
  await assert.rejects(call, (e: unknown) => {
    assert.equal(statusOf(e), 403, `refused with 403, not ${String(e)}`);
    assert.match(String(e instanceof Error ? e.message : e), why);
    return true;
  });
}

before(async () => {
  cp = await startKubeControlPlane({ nodes });
  admin = await loadKubeConfig(cp.admin.kubeconfig);
  for (const manifest of ['rbac.yaml', 'operator-rbac.yaml'])
    await run(join(cp.bins, 'kubectl'), [
      ...['--kubeconfig', cp.admin.kubeconfig, 'apply', '-f', join(deploy, manifest)],
    ]);
  const api = admin.makeApiClient(CoreV1Api);
  for (const name of nodes) await api.createNode({ body: { metadata: { name } } });
  // An admission policy is in force a moment after it is applied: wait until a change to another
  // Node that would change nothing (an empty patch still passes admission) is refused.
  const n1 = await agent('n-1');
  await eventually(() => refused(patch(n1, 'n-2', {}), /only its own Node/), {
    timeoutMs: 30_000,
    intervalMs: 250,
  });
});

after(async () => {
  await cp.stop();
});

describe("an agent's Kubernetes credential", () => {
  it('cordons its own Node, marks it quarantined and advertises its endpoint', async () => {
    const n1 = await agent('n-1');
    await patch(n1, 'n-1', {
      spec: { unschedulable: true },
      metadata: {
        labels: { 'molt.dev/quarantined': 'op-1' },
        annotations: {
          'molt.dev/cordoned-by': 'op-1',
          'molt.dev/agent-endpoint': 'https://10.0.0.1:7443',
        },
      },
    });
    await patch(n1, 'n-1', {
      spec: { unschedulable: null },
      metadata: { labels: { 'molt.dev/quarantined': null } },
    });
    const n = await readNode('n-1');
    assert.equal(n.spec?.unschedulable, undefined);
    assert.equal(n.metadata?.annotations?.['molt.dev/agent-endpoint'], 'https://10.0.0.1:7443');
  });

  it('cannot cordon, relabel or re-point another Node', async () => {
    const n1 = await agent('n-1');
    const before = await readNode('n-2');
    for (const body of [
      { spec: { unschedulable: true } },
      { metadata: { annotations: { 'molt.dev/agent-endpoint': 'https://10.0.0.1:7443' } } },
      { metadata: { labels: { [PoolLabel]: 'control-plane' } } },
      { metadata: { labels: { 'molt.dev/quarantined': 'op-2' } } },
    ])
      await refused(patch(n1, 'n-2', body), /molt:agent:n-1 may change only its own Node/);
    // What the agent tried to change, compared field by field: the node controller may update
    // n-2 meanwhile (it has no kubelet, so it turns NotReady and is tainted), which a comparison
    // of resourceVersions would take for the agent's doing.
    const n = await readNode('n-2');
    const seen = (x: typeof n) => ({
      unschedulable: x.spec?.unschedulable,
      endpoint: x.metadata?.annotations?.['molt.dev/agent-endpoint'],
      pool: x.metadata?.labels?.[PoolLabel],
      quarantined: x.metadata?.labels?.['molt.dev/quarantined'],
    });
    assert.deepEqual(seen(n), seen(before), 'n-2 unchanged');
    assert.deepEqual(seen(n), {
      unschedulable: undefined,
      endpoint: undefined,
      pool: undefined,
      quarantined: undefined,
    });
  });

  it('cannot put its own Node into a pool or a role', async () => {
    const n1 = await agent('n-1');
    for (const label of [PoolLabel, 'molt.dev/pool', 'node-role.kubernetes.io/control-plane'])
      await refused(
        patch(n1, 'n-1', { metadata: { labels: { [label]: 'workers' } } }),
        new RegExp(`no label of its Node but molt.dev/quarantined, not ${label}`),
      );
    const labels = (await readNode('n-1')).metadata?.labels ?? {};
    assert.equal(labels[PoolLabel], undefined);
    assert.equal(labels['molt.dev/pool'], undefined);
  });

  it('deletes pods on its own Node only', async () => {
    const w = workloads(admin);
    const ns = await w.namespace('own-pods');
    // The namespace's default ServiceAccount, which a pod needs, comes a moment later.
    await eventually(() => w.barePod(ns, 'on-n-2', 'n-2'), { timeoutMs: 30_000 });
    await w.barePod(ns, 'on-n-1', 'n-1');
    const n1 = await agent('n-1');
    await refused(
      n1.deleteNamespacedPod({ namespace: ns, name: 'on-n-2', gracePeriodSeconds: 0 }),
      /may delete only pods on its own Node, not own-pods\/on-n-2/,
    );
    await n1.deleteNamespacedPod({ namespace: ns, name: 'on-n-1', gracePeriodSeconds: 0 });
    assert.deepEqual(
      (await w.pods(ns)).map((p) => p.metadata?.name),
      ['on-n-2'],
    );
  });
});

describe('a kubelet', () => {
  it('cannot label its own Node into a pool or a role (NodeRestriction)', async () => {
    const k1 = await kubelet('n-1');
    for (const label of [PoolLabel, 'node-role.kubernetes.io/control-plane'])
      await refused(
        patch(k1, 'n-1', { metadata: { labels: { [label]: 'workers' } } }),
        /is not allowed to modify labels/,
      );
  });
});

describe("the operator's inventory from Nodes", () => {
  it('takes a pool only from the label no node can write', async () => {
    // n-1's kubelet labels its own Node with the old pool label, which NodeRestriction allows;
    // an admin labels n-2. Both agents advertise where they are.
    await patch(await kubelet('n-1'), 'n-1', {
      metadata: { labels: { 'molt.dev/pool': 'workers' } },
    });
    await patch(await core(cp.admin.kubeconfig), 'n-2', {
      metadata: { labels: { [PoolLabel]: 'workers' } },
    });
    await patch(await agent('n-2'), 'n-2', {
      metadata: { annotations: { 'molt.dev/agent-endpoint': 'https://10.0.0.2:7443' } },
    });
    const declared = createKubeDeclared({
      kc: await loadKubeConfig(cp.operator.kubeconfig),
      namespace: 'molt-system',
      now: Date.now,
      nodes: {},
    });
    // A custom resource's storage may still be initialising just after the CRDs were applied.
    const { machines = [] } = await eventually(() => declared.read(), { timeoutMs: 30_000 });
    const taken = machines.flatMap((m) => ('machine' in m ? [m.machine] : []));
    assert.deepEqual(
      taken.map((m) => [m.id, m.pool, m.role, m.endpoint]),
      [['n-2', 'workers', 'worker', 'https://10.0.0.2:7443']],
    );
    const skipped = machines.flatMap((m) => ('skipped' in m ? [m] : []));
    assert.deepEqual(
      skipped.map((s) => s.node),
      ['n-1'],
    );
    assert.match(skipped[0]?.skipped ?? '', /its own kubelet may write/);
  });
});
