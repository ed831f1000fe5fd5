// SPDX-License-Identifier: Apache-2.0
// Issue 19 (docs/adr/0013 §4, §7): the Workloads adapter on a real control plane (kube-apiserver,
// controller-manager, scheduler, etcd) with two lab kubelets that decide readiness from the image
// labels in a real registry. The conformance suite rolls a Deployment, a DaemonSet and a
// StatefulSet out for real; then a Deployment moved to an image labelled dev.molt.lab.ready=false
// keeps Running-but-unready pods, stays progressing, and fails with ProgressDeadlineExceeded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { LabReadyLabel } from '../../../src/agent/adapters/lab/image-readiness.ts';
import { buildImage, createRegistryClient, pushImage } from '../../../src/oci/index.ts';
import { createKubeWorkloads } from '../../../src/operator/adapters/kube-workloads/index.ts';
import type { WorkloadRef, Workloads } from '../../../src/operator/ports/workloads.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import {
  workloadsConformance,
  type WorkloadsRig,
} from '../../../src/testkit/workloads-conformance.ts';
import { createWorkload, startWorkloadCluster, type WorkloadCluster } from './workload-cluster.ts';

const nodes = ['wl-1', 'wl-2'];
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

interface Cluster extends WorkloadCluster {
  /** `ready1..3` (ready, distinct digests) and `bad` (labelled not ready), by tag. */
  image: (tag: string) => string;
}

async function startCluster(): Promise<Cluster> {
  const c = await startWorkloadCluster(nodes);
  const client = createRegistryClient({ registry: c.registry.host, insecure: true });
  const digests = new Map<string, string>();
  for (const [tag, labels] of [
    ['ready1', { build: '1' }],
    ['ready2', { build: '2' }],
    ['ready3', { build: '3' }],
    ['bad', { build: '4', [LabReadyLabel]: 'false' }],
  ] as const)
    digests.set(tag, await pushImage(client, 'lab/app', [tag], buildImage({ labels })));
  await client.close();
  return {
    ...c,
    image: (tag) => `${c.registry.host}/lab/app:${tag}@${digests.get(tag) ?? ''}`,
  };
}

let shared: Cluster | undefined;
const cluster = async (): Promise<Cluster> => (shared ??= await startCluster());
after(async () => {
  await shared?.stop();
});

workloadsConformance({
  name: 'a real control plane with lab kubelets',
  async start(): Promise<WorkloadsRig> {
    const c = await cluster();
    const workloads = createKubeWorkloads({ kc: c.operator, pageSize: 2 });
    return {
      workloads,
      async create(ref, image, labels) {
        await createWorkload(c.admin, ref, image, { labels });
        await eventually(
          async () => {
            assert.equal((await workloads.progress(ref)).state, 'available');
          },
          { timeoutMs: 60_000, intervalMs: 250 },
        );
      },
      async edit(ref, container, image) {
        assert.equal(ref.kind, 'Deployment');
        await c.admin.makeApiClient(AppsV1Api).patchNamespacedDeployment(
          {
            name: ref.name,
            namespace: ref.namespace,
            body: { spec: { template: { spec: { containers: [{ name: container, image }] } } } },
          },
          strategic,
        );
      },
      images: [c.image('ready1'), c.image('ready2'), c.image('ready3')],
      platforms: ['linux/amd64'],
      rolloutTimeoutMs: 60_000,
      stop: () => Promise.resolve(),
    };
  },
});

describe('an image the lab labels not ready', () => {
  let c: Cluster;
  let workloads: Workloads;
  const ref: WorkloadRef = { kind: 'Deployment', namespace: 'unready', name: 'stuck' };
  before(async () => {
    c = await cluster();
    workloads = createKubeWorkloads({ kc: c.operator });
    await createWorkload(c.admin, ref, c.image('ready1'), {
      spec: { progressDeadlineSeconds: 10 },
    });
    await eventually(
      async () => {
        assert.equal((await workloads.progress(ref)).state, 'available');
      },
      {
        timeoutMs: 60_000,
        intervalMs: 250,
      },
    );
  });

  it('runs its pods but never Ready, keeps the rollout progressing, then fails it at the deadline', async () => {
    const [from, to] = [c.image('ready1'), c.image('bad')];
    await workloads.setImages(ref, [{ container: 'app', from, to }]);
    const core = c.admin.makeApiClient(CoreV1Api);
    const onBad = async (): Promise<V1Pod[]> =>
      (await core.listNamespacedPod({ namespace: ref.namespace })).items.filter((p) =>
        p.spec?.containers.some((x) => x.image === to),
      );
    const pod = await eventually(
      async () => {
        const [p] = (await onBad()).filter((x) => x.status?.phase === 'Running');
        assert.ok(p !== undefined, 'a pod on the bad image is Running');
        return p;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const cond = (type: string) => pod.status?.conditions?.find((x) => x.type === type);
    assert.equal(cond('Ready')?.status, 'False');
    assert.equal(cond('ContainersReady')?.status, 'False');
    assert.match(cond('Ready')?.message ?? '', /\[app\].*dev\.molt\.lab\.ready=false/);
    assert.deepEqual(
      pod.status?.containerStatuses?.map((s) => [s.name, s.ready, s.state?.running !== undefined]),
      [
        ['app', false, true],
        ['side', true, true],
      ],
    );
    // Before the deadline: progressing, never available.
    const p = await workloads.progress(ref);
    assert.equal(p.state, 'progressing', JSON.stringify(p));
    const failed = await eventually(
      async () => {
        const now = await workloads.progress(ref);
        assert.notEqual(now.state, 'available');
        if (now.state !== 'failed') throw new Error(`still ${now.state}`);
        return now;
      },
      { timeoutMs: 45_000, intervalMs: 500 },
    );
    assert.equal(failed.reason, 'ProgressDeadlineExceeded');
    assert.match(failed.message, /Deployment\/unready\/stuck exceeded its progress deadline/);
    // The old pods kept serving: the stuck rollout never took one away.
    const old = (await core.listNamespacedPod({ namespace: ref.namespace })).items.filter(
      (x) =>
        x.spec?.containers.some((y) => y.image === from) === true &&
        x.status?.conditions?.some((y) => y.type === 'Ready' && y.status === 'True') === true,
    );
    assert.equal(old.length, 2);
  });
});
