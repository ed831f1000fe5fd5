// SPDX-License-Identifier: Apache-2.0
// The rig of the workload tests (docs/adr/0013 §4, §7): a real control plane with the
// scheduler and controller-manager, a Debian registry, and two lab kubelets that decide readiness
// from the image's labels (dev.molt.lab.ready=false: Running, never Ready). The operator's user is
// bound by deploy/kubernetes/operator-rbac.yaml, as shipped. Used by workloads.test.ts and
// images-rollout.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import {
  createImageReadiness,
  type ImageReadiness,
} from '../../../src/agent/adapters/lab/image-readiness.ts';
import { startLabKubelet, type LabKubelet } from '../../../src/agent/adapters/lab/kubelet-node.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import type { WorkloadRef } from '../../../src/operator/ports/workloads.ts';
import { loadKubeConfig, statusOf } from '../../../src/platform/kube/client.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { startRegistry, type TestRegistry } from '../../../src/testkit/registry-process.ts';

export interface WorkloadCluster {
  cp: KubeControlPlane;
  registry: TestRegistry;
  admin: KubeConfig;
  /** As molt-operator, under deploy/kubernetes/operator-rbac.yaml. */
  operator: KubeConfig;
  readiness: ImageReadiness;
  kubelets: LabKubelet[];
  stop(): Promise<void>;
}

/** Start the rig with a lab kubelet per node name; resolves once the Nodes take pods. */
export async function startWorkloadCluster(
  nodes: readonly string[] = ['wl-1', 'wl-2'],
): Promise<WorkloadCluster> {
  const [cp, registry] = await Promise.all([startKubeControlPlane({ nodes }), startRegistry()]);
  const readiness = createImageReadiness({ registry: { insecure: true } });
  const kubelets: LabKubelet[] = [];
  for (const name of nodes)
    kubelets.push(
      startLabKubelet({
        kc: await loadKubeConfig(cp.node(name).kubeconfig),
        name,
        version: '1.0.0',
        imageReady: (i) => readiness.check(i),
      }),
    );
  await Promise.all(kubelets.map((k) => k.ready));
  const admin = await loadKubeConfig(cp.admin.kubeconfig);
  const core = admin.makeApiClient(CoreV1Api);
  // The operator reads and patches workloads as itself, under the RBAC molt ships.
  await promisify(execFile)(join(cp.bins, 'kubectl'), [
    ...['--kubeconfig', cp.admin.kubeconfig, 'apply', '-f'],
    join(import.meta.dirname, '../../../deploy/kubernetes/operator-rbac.yaml'),
  ]);
  const operator = await loadKubeConfig(cp.operator.kubeconfig);
  // The scheduler places nothing on a node until the node controller has untainted it.
  await eventually(
    async () => {
      for (const name of nodes)
        assert.deepEqual((await core.readNode({ name })).spec?.taints ?? [], [], name);
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return {
    cp,
    registry,
    admin,
    operator,
    readiness,
    kubelets,
    async stop() {
      for (const k of kubelets) await k.stop();
      await readiness.close();
      await cp.stop();
      await registry.stop();
    },
  };
}

/**
 * Create `ref` with init container `init` and containers `app`, `side` on `image` (2 replicas;
 * a DaemonSet on every node). `spec` is merged into a Deployment's spec.
 */
export async function createWorkload(
  admin: KubeConfig,
  ref: WorkloadRef,
  image: string,
  o: { labels?: Record<string, string>; spec?: Record<string, unknown> } = {},
): Promise<void> {
  const { labels = {}, spec: extra = {} } = o;
  const apps = admin.makeApiClient(AppsV1Api);
  await admin
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: ref.namespace } } })
    .catch((e: unknown) => {
      if (statusOf(e) !== 409) throw e;
    });
  const app = ref.name;
  const template = {
    metadata: { labels: { app } },
    spec: {
      initContainers: [{ name: 'init', image }],
      containers: [
        { name: 'app', image },
        { name: 'side', image },
      ],
      terminationGracePeriodSeconds: 1,
    },
  };
  const metadata = { name: ref.name, labels };
  const selector = { matchLabels: { app } };
  const namespace = ref.namespace;
  switch (ref.kind) {
    case 'Deployment':
      await apps.createNamespacedDeployment({
        namespace,
        body: { metadata, spec: { replicas: 2, selector, template, ...extra } },
      });
      return;
    case 'DaemonSet':
      await apps.createNamespacedDaemonSet({
        namespace,
        body: { metadata, spec: { selector, template } },
      });
      return;
    case 'StatefulSet':
      await apps.createNamespacedStatefulSet({
        namespace,
        body: {
          metadata,
          spec: {
            replicas: 2,
            serviceName: app,
            podManagementPolicy: 'Parallel',
            selector,
            template,
          },
        },
      });
      return;
  }
}
