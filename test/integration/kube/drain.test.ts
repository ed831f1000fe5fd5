// SPDX-License-Identifier: Apache-2.0
// Cordon, drain and uncordon against a real control plane (kube-apiserver, controller-manager with
// the disruption controller, scheduler, etcd 3.5) with two fake kubelets: real Deployments and
// DaemonSets placed by the real scheduler, evicted pods recreated by the real controllers, PDBs
// enforced by the real eviction API. Each drain-policy outcome behaves as specified, and a node is
// never left cordoned by accident, nor uncordoned when someone else cordoned it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig, PolicyV1Api } from '@kubernetes/client-node';
import { createApiKubeNode } from '../../../src/agent/adapters/kube-node/index.ts';
import { defaultDrainPolicy, type DrainPolicy } from '../../../src/core/drain/pods.ts';
import { ErrorCode, isMoltError } from '../../../src/core/errors.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import type { KubernetesConfig } from '../../../src/protocol/machine-config.ts';
import {
  CordonAnnotation,
  createNodeDrainer,
  QuarantineLabel,
  type NodeDrainer,
} from '../../../src/agent/adapters/kube-node/drain.ts';
import { startLabKubelet, type LabKubelet } from '../../../src/agent/adapters/lab/kubelet-node.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { startTcpBalancer } from '../../../src/testkit/tcp-balancer.ts';
import { workloads, type Workloads } from '../../../src/lab/fleet/workloads.ts';

const run = promisify(execFile);
let cp: KubeControlPlane;
let admin: KubeConfig;
let w: Workloads;
const kubelets: LabKubelet[] = [];
const nodes = ['drain-1', 'drain-2'];
// drain-3 has an identity but no kubelet until a test starts one.

before(async () => {
  cp = await startKubeControlPlane({ nodes: [...nodes, 'drain-3'] });
  admin = await loadKubeConfig(cp.admin.kubeconfig);
  w = workloads(admin);
  for (const name of nodes)
    kubelets.push(
      startLabKubelet({
        kc: await loadKubeConfig(cp.node(name).kubeconfig),
        name,
        version: '1.0.0',
        bootId: `b2-${name}`,
      }),
    );
  await Promise.all(kubelets.map((k) => k.ready));
  // The node controller untaints a node (not-ready:NoSchedule) only after it has seen it Ready;
  // until then the scheduler would put every pod on the other node.
  await eventually(async () => {
    for (const name of nodes)
      assert.deepEqual((await node(name)).spec?.taints ?? [], [], `${name} still tainted`);
  });
});

after(async () => {
  for (const k of kubelets) await k.stop();
  await cp.stop();
});

const policy = (o: Partial<DrainPolicy> = {}): DrainPolicy => ({
  ...defaultDrainPolicy,
  timeoutMs: 30_000,
  ...o,
});

/** The agent's drain settings (its machine config's `kubernetes.drain`), with this timeout. */
const drainConfig = (timeoutSeconds: number): KubernetesConfig['drain'] => ({
  timeoutSeconds,
  onTimeout: 'abort-and-uncordon',
  deleteEmptyDirData: false,
  force: false,
});

async function node(name: string) {
  return admin.makeApiClient(CoreV1Api).readNode({ name });
}

function drainer(name: string): NodeDrainer {
  return createNodeDrainer({ kc: admin, node: name, pollMs: 200 });
}

/** A namespace with a Deployment of `replicas` spread over both nodes and a PDB. */
async function app(ns: string, replicas: number, minAvailable: number): Promise<void> {
  await w.namespace(ns);
  await w.deployment(ns, 'web', replicas);
  await w.running(ns, replicas);
  await w.pdb(ns, 'web', 'web', minAvailable);
}

async function reset(name: string): Promise<void> {
  await admin.makeApiClient(CoreV1Api).patchNode(
    {
      name,
      body: {
        spec: { unschedulable: null },
        metadata: {
          annotations: { [CordonAnnotation]: null },
          labels: { [QuarantineLabel]: null },
        },
      },
    },
    (await import('@kubernetes/client-node')).setHeaderOptions(
      'Content-Type',
      'application/merge-patch+json',
    ),
  );
}

describe('cordon, drain, uncordon on a real control plane', () => {
  it('evicts every managed pod through the PDB one disruption at a time, skips DaemonSet pods, and uncordons', async () => {
    await app('drain-ok', 4, 3);
    await w.daemonSet('drain-ok', 'agentd');
    await w.running('drain-ok', 6);
    const d = drainer('drain-1');
    const before = await w.pods('drain-ok', 'drain-1');
    assert.ok(
      before.some((p) => p.metadata?.labels?.['app'] === 'web'),
      'the scheduler put web pods on drain-1',
    );
    assert.equal(await d.cordon('op-1'), true);
    const report = await d.drain('op-1', policy());
    const left = await w.pods('drain-ok', 'drain-1');
    assert.deepEqual(
      left.map((p) => p.metadata?.labels?.['app']),
      ['agentd'],
      'only the DaemonSet pod stays',
    );
    assert.deepEqual(
      report.skipped,
      left.map((p) => `drain-ok/${p.metadata?.name ?? ''}`),
    );
    assert.equal(report.evicted.length, before.length - 1);
    // The Deployment made its pods again on the other node.
    await w.running('drain-ok', 6);
    assert.equal(await d.uncordon(), 'uncordoned');
    const n = await node('drain-1');
    assert.notEqual(n.spec?.unschedulable, true);
    assert.equal(n.metadata?.annotations?.[CordonAnnotation], undefined);
  });

  describe('when a PDB allows no disruption', () => {
    before(async () => {
      await app('drain-blocked', 4, 4);
    });
    // The blocked pods end up on drain-2: the budget must not block the tests after these.
    after(async () => {
      await admin
        .makeApiClient(PolicyV1Api)
        .deleteNamespacedPodDisruptionBudget({ name: 'web', namespace: 'drain-blocked' });
    });

    it('abort-and-uncordon: fails with MOLT_DRAIN_TIMEOUT, evicts nothing and uncordons', async () => {
      const d = drainer('drain-1');
      const on = (await w.pods('drain-blocked', 'drain-1')).length;
      assert.ok(on > 0);
      await d.cordon('op-2');
      await assert.rejects(d.drain('op-2', policy({ timeoutMs: 2_000 })), (e: unknown) => {
        assert.ok(isMoltError(e, ErrorCode.DrainTimeout), String(e));
        assert.equal((e.details?.['pods'] as string[]).length, on);
        return true;
      });
      assert.equal((await w.pods('drain-blocked', 'drain-1')).length, on);
      assert.notEqual((await node('drain-1')).spec?.unschedulable, true);
      // The undo's Uncordon that follows finds nothing to do, and says so.
      assert.equal(await d.uncordon(), 'schedulable');
    });

    it('quarantine-and-skip: fails as quarantined, and the node stays cordoned and labelled', async () => {
      const d = drainer('drain-1');
      await d.cordon('op-3');
      await assert.rejects(
        d.drain('op-3', policy({ timeoutMs: 2_000, onTimeout: 'quarantine-and-skip' })),
        (e: unknown) => isMoltError(e, ErrorCode.DrainQuarantined),
      );
      const n = await node('drain-1');
      assert.equal(n.spec?.unschedulable, true);
      assert.equal(n.metadata?.labels?.[QuarantineLabel], 'op-3');
      assert.equal(await d.uncordon(), 'quarantined', 'the upgrade’s undo does not release it');
      assert.equal((await node('drain-1')).spec?.unschedulable, true);
      await reset('drain-1');
    });

    it('force-delete: deletes what the budget protects and finishes', async () => {
      const d = drainer('drain-1');
      await d.cordon('op-4');
      const report = await d.drain('op-4', policy({ timeoutMs: 2_000, onTimeout: 'force-delete' }));
      assert.ok(report.forced.length > 0);
      assert.deepEqual(await w.pods('drain-blocked', 'drain-1'), []);
      assert.equal(await d.uncordon(), 'uncordoned');
    });
  });

  it('never uncordons a node someone else cordoned', async () => {
    const core = admin.makeApiClient(CoreV1Api);
    const { setHeaderOptions } = await import('@kubernetes/client-node');
    await core.patchNode(
      { name: 'drain-2', body: { spec: { unschedulable: true } } },
      setHeaderOptions('Content-Type', 'application/merge-patch+json'),
    );
    const d = drainer('drain-2');
    assert.equal(await d.cordon('op-5'), false);
    assert.equal(await d.uncordon(), 'cordoned-by-another');
    assert.equal((await node('drain-2')).spec?.unschedulable, true);
    await reset('drain-2');
  });

  it('refuses to start a drain that would lose an unmanaged pod or emptyDir data', async () => {
    const ns = await w.namespace('drain-refused');
    await w.barePod(ns, 'lonely', 'drain-2');
    await w.running(ns, 1);
    const d = drainer('drain-2');
    await assert.rejects(d.drain('op-6', policy()), (e: unknown) => {
      assert.ok(isMoltError(e, ErrorCode.DrainRefused), String(e));
      assert.match(e.message, /drain-refused\/lonely .*force: true/);
      return true;
    });
    assert.equal((await w.pods(ns, 'drain-2')).length, 1, 'nothing was evicted');
    await w.core.deleteNamespacedPod({ name: 'lonely', namespace: ns, gracePeriodSeconds: 0 });
  });

  it('rides out an API server outage mid-drain, and reports one that outlasts the timeout as MOLT_KUBE_UNAVAILABLE', async () => {
    await app('drain-outage', 4, 3);
    // The drainer reaches the API server through a proxy this test can cut.
    const proxy = await startTcpBalancer([Number(new URL(cp.server).port)]);
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [
          {
            name: 'c',
            server: `https://${proxy.address}`,
            caData: Buffer.from(cp.ca).toString('base64'),
          },
        ],
        users: [{ name: 'u', token: cp.admin.token }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const said: string[] = [];
      const d = createNodeDrainer({
        kc,
        node: 'drain-1',
        pollMs: 200,
        log: (line) => said.push(line),
      });
      assert.equal(await d.cordon('op-outage'), true);
      proxy.down();
      const drained = d.drain('op-outage', policy({ timeoutMs: 30_000 }));
      // Awaited below; until then a rejection must not go unhandled if the wait fails first.
      drained.catch(() => undefined);
      // Back only once the drainer has found it away and tried again: it rode out an outage.
      try {
        await eventually(
          () => {
            const retries = said.filter((l) => l.startsWith('the API server is not answering'));
            assert.ok(retries.length >= 2, said.join('\n'));
            return Promise.resolve();
          },
          { timeoutMs: 20_000, intervalMs: 50 },
        );
      } finally {
        proxy.up();
      }
      const report = await drained;
      assert.ok(report.evicted.length > 0, 'it evicted once the API server was back');
      assert.deepEqual(
        await w
          .pods('drain-outage', 'drain-1')
          .then((p) => p.filter((x) => x.metadata?.labels?.['app'] === 'web')),
        [],
      );
      assert.equal(await d.uncordon(), 'uncordoned');

      assert.equal(await d.cordon('op-outage-2'), true);
      proxy.down();
      await assert.rejects(d.drain('op-outage-2', policy({ timeoutMs: 1_500 })), (e: unknown) =>
        isMoltError(e, ErrorCode.KubeUnavailable),
      );
      proxy.up();
      assert.equal(
        (await node('drain-1')).spec?.unschedulable,
        true,
        'left cordoned: nothing was guessed',
      );
      assert.equal(await d.uncordon(), 'uncordoned');

      /** `call` started while the API server is away, which comes back once it was retried. */
      const outlasting = async <T>(call: () => Promise<T>): Promise<T> => {
        said.length = 0;
        proxy.down();
        const running = call();
        running.catch(() => undefined);
        try {
          await eventually(
            () => {
              assert.ok(said.some((l) => l.startsWith('the API server is not answering')));
              return Promise.resolve();
            },
            { timeoutMs: 20_000, intervalMs: 50 },
          );
        } finally {
          proxy.up();
        }
        return running;
      };
      // A cordon waits the API server out too (a single control plane busy with its own upgrade).
      assert.equal(await outlasting(() => d.cordon('op-outage-3')), true);
      assert.equal((await node('drain-1')).spec?.unschedulable, true, 'cordoned once back');
      // Asked again by the same operation (its first answer lost): cordoned by it, so true.
      assert.equal(await d.cordon('op-outage-3'), true);
      // So does the version read of a pull's kubelet skew check, which comes before the cordon.
      assert.match((await outlasting(() => d.apiServer())).version, /^v1\.\d+\.\d+/);
      // An uncordon (a fallback's, right after the boot) waits the API server out too.
      assert.equal(await outlasting(() => d.uncordon()), 'uncordoned');
      assert.notEqual((await node('drain-1')).spec?.unschedulable, true, 'uncordoned');
    } finally {
      await proxy.close();
      // Gone before the next test drains: a terminating namespace's pods cannot be evicted.
      await w.core.deleteNamespace({ name: 'drain-outage' });
      await eventually(
        async () => {
          const left = await w.core.readNamespace({ name: 'drain-outage' }).catch(() => undefined);
          assert.equal(left, undefined, 'namespace drain-outage still terminating');
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );
    }
  });

  it('reports a node that does not exist with its own code', async () => {
    await assert.rejects(drainer('no-such-node').cordon('op-7'), (e: unknown) =>
      isMoltError(e, ErrorCode.KubeNodeNotFound),
    );
  });
});

describe("the agent's Kubernetes node adapter, under molt's least-privilege role", () => {
  before(async () => {
    // deploy/kubernetes/rbac.yaml, applied as a user would (kubectl apply).
    const rbac = join(import.meta.dirname, '../../../deploy/kubernetes/rbac.yaml');
    await run(`${cp.bins}/kubectl`, ['--kubeconfig', cp.admin.kubeconfig, 'apply', '-f', rbac]);
  });

  it('cordons, drains and uncordons its own node, and reports it Ready', async () => {
    const ns = await w.namespace('agent-node');
    await w.deployment(ns, 'web', 2);
    await w.running(ns, 2);
    const kube = await createApiKubeNode(
      {
        kubeconfig: cp.agent('drain-2').kubeconfig,
        drain: drainConfig(60),
      },
      { machine: 'drain-2', booted: '1.0.0' },
    );
    assert.deepEqual(await kube.cordon('op-8'), { status: 'done' });
    assert.deepEqual(await kube.drain('op-8'), { status: 'done' });
    assert.deepEqual(await w.pods(ns, 'drain-2'), []);
    assert.deepEqual(await kube.ready(), { status: 'done' });
    assert.deepEqual(await kube.uncordon('op-8'), { status: 'done' });
    // Nothing of molt left to undo, and the event says so rather than blaming someone else's cordon
    // (a failed drain's abort-and-uncordon leaves exactly this state for the undo's Uncordon).
    assert.deepEqual(await kube.uncordon('op-8'), {
      status: 'skipped',
      reason: 'node drain-2 is schedulable already',
    });
  });

  it('is not ready while the node still reports another molt release', async () => {
    const drain = drainConfig(1);
    const kube = await createApiKubeNode(
      { kubeconfig: cp.agent('drain-2').kubeconfig, drain },
      { machine: 'drain-2', booted: '1.1.0' },
    );
    await assert.rejects(
      kube.ready(),
      (e: unknown) =>
        isMoltError(e, ErrorCode.KubeUnavailable) && /reports molt 1\.0\.0/.test(e.message),
    );
  });

  it("is not ready while the Node carries another boot's status, naming both boots, or another kubelet than its release's", async () => {
    const drain = drainConfig(1);
    const agent = (bootId: string, kubelet = 'v1.36.3') =>
      createApiKubeNode(
        { kubeconfig: cp.agent('drain-2').kubeconfig, drain },
        { machine: 'drain-2', booted: '1.0.0', bootId, kubelet },
      );
    // The machine rebooted (boot 3) and its kubelet has not reported yet: the Node still says Ready
    // with the status boot 2's kubelet posted.
    await assert.rejects(
      (await agent('b3-drain-2')).ready(),
      (e: unknown) =>
        isMoltError(e, ErrorCode.KubeUnavailable) &&
        e.message ===
          "node drain-2's kubelet has not reported since this boot " +
            '(its Node says boot b2-drain…, this is b3-drain…)',
    );
    assert.deepEqual(await (await agent('b2-drain-2')).ready(), { status: 'done' });
    // This boot's kubelet, but not the one the booted release carries.
    await assert.rejects(
      (await agent('b2-drain-2', 'v1.35.4')).ready(),
      (e: unknown) =>
        isMoltError(e, ErrorCode.KubeUnavailable) &&
        e.message === 'node drain-2 runs kubelet v1.36.3, but the booted release carries v1.35.4',
    );
  });

  it('a lab kubelet shut down cleanly reports its node NotReady at once', async () => {
    const kubelet = startLabKubelet({
      kc: await loadKubeConfig(cp.node('drain-3').kubeconfig),
      name: 'drain-3',
      version: '2.0.0',
    });
    await kubelet.ready;
    const ready = async () =>
      (await node('drain-3')).status?.conditions?.find((c) => c.type === 'Ready')?.status;
    assert.equal(await ready(), 'True');
    assert.equal((await node('drain-3')).metadata?.labels?.['molt.dev/version'], '2.0.0');
    await kubelet.shutdown();
    assert.equal(await ready(), 'False');
    await admin.makeApiClient(CoreV1Api).deleteNode({ name: 'drain-3' });
  });

  it('reports what its role does not allow with MOLT_KUBE_FORBIDDEN, changing nothing', async () => {
    const operator = await loadKubeConfig(cp.operator.kubeconfig);
    await assert.rejects(
      createNodeDrainer({ kc: operator, node: 'drain-2' }).cordon('op-9'),
      (e: unknown) =>
        isMoltError(e, ErrorCode.KubeForbidden) && /read node drain-2/.test(e.message),
    );
    assert.notEqual((await node('drain-2')).spec?.unschedulable, true);
  });

  it('refuses a kubeconfig it cannot use with MOLT_KUBECONFIG_INVALID', async () => {
    const drain = drainConfig(1);
    await assert.rejects(
      createApiKubeNode({ kubeconfig: '/nonexistent/kubeconfig', drain }, { machine: 'drain-2' }),
      (e: unknown) => isMoltError(e, ErrorCode.KubeConfigInvalid),
    );
  });
});
