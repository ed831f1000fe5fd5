// SPDX-License-Identifier: Apache-2.0
// Real workloads for the Kubernetes tests: Deployments, DaemonSets, bare pods and PodDisruption
// Budgets created through the API (placed by the real scheduler, kept by the real controllers),
// and waits on what the cluster reports.
import {
  AppsV1Api,
  CoreV1Api,
  PolicyV1Api,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { eventually } from '../../platform/process/managed-process.ts';

/**
 * What the pods run, and where. The lab's in-process kubelet runs no container, so any name does;
 * a real node pulls `image` and runs `command` (the lab's own busybox image from its registry,
 * docs/adr/0015). `nodeSelector` keeps them on some nodes (the lab's VMs).
 */
export interface WorkloadRun {
  readonly image: string;
  readonly command?: readonly string[];
  readonly nodeSelector?: Readonly<Record<string, string>>;
}

const placeholder: WorkloadRun = { image: 'registry.example/app:1' };

export interface Workloads {
  readonly core: CoreV1Api;
  namespace(name: string): Promise<string>;
  deployment(ns: string, name: string, replicas: number, o?: { emptyDir?: boolean }): Promise<void>;
  daemonSet(ns: string, name: string): Promise<void>;
  /** A StatefulSet (pods `name-0…`, recreated under the same name after an eviction). */
  statefulSet(ns: string, name: string, replicas: number): Promise<void>;
  barePod(ns: string, name: string, node: string): Promise<void>;
  pdb(ns: string, name: string, app: string, minAvailable: number): Promise<void>;
  /** Pods of `ns` (optionally on `node`). */
  pods(ns: string, node?: string): Promise<V1Pod[]>;
  /**
   * Wait until `ns` has `count` Running and Ready pods (the PDB controller has seen them too);
   * real nodes pull and start containers, so they get longer. @default 60 s
   */
  running(ns: string, count: number, timeoutMs?: number): Promise<void>;
}

const ready = (p: V1Pod): boolean =>
  p.metadata?.deletionTimestamp === undefined &&
  p.status?.phase === 'Running' &&
  (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export function workloads(kc: KubeConfig, run: WorkloadRun = placeholder): Workloads {
  const container = [
    {
      name: 'app',
      image: run.image,
      ...(run.command !== undefined && { command: [...run.command] }),
    },
  ];
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const policy = kc.makeApiClient(PolicyV1Api);
  const template = (app: string, emptyDir = false) => ({
    metadata: { labels: { app } },
    spec: {
      containers: container,
      terminationGracePeriodSeconds: 1,
      ...(run.nodeSelector !== undefined && { nodeSelector: { ...run.nodeSelector } }),
      ...(emptyDir && { volumes: [{ name: 'scratch', emptyDir: {} }] }),
    },
  });
  const pods = async (ns: string, node?: string): Promise<V1Pod[]> =>
    (
      await core.listNamespacedPod({
        namespace: ns,
        ...(node !== undefined && { fieldSelector: `spec.nodeName=${node}` }),
      })
    ).items;
  return {
    core,
    async namespace(name) {
      await core.createNamespace({ body: { metadata: { name } } });
      return name;
    },
    async deployment(ns, name, replicas, o = {}) {
      await apps.createNamespacedDeployment({
        namespace: ns,
        body: {
          metadata: { name },
          spec: {
            replicas,
            selector: { matchLabels: { app: name } },
            template: template(name, o.emptyDir),
          },
        },
      });
    },
    async daemonSet(ns, name) {
      await apps.createNamespacedDaemonSet({
        namespace: ns,
        body: {
          metadata: { name },
          spec: { selector: { matchLabels: { app: name } }, template: template(name) },
        },
      });
    },
    async statefulSet(ns, name, replicas) {
      await apps.createNamespacedStatefulSet({
        namespace: ns,
        body: {
          metadata: { name },
          spec: {
            replicas,
            serviceName: name,
            podManagementPolicy: 'Parallel',
            selector: { matchLabels: { app: name } },
            template: template(name),
          },
        },
      });
    },
    async barePod(ns, name, node) {
      await core.createNamespacedPod({
        namespace: ns,
        body: { metadata: { name }, spec: { nodeName: node, containers: container } },
      });
    },
    async pdb(ns, name, app, minAvailable) {
      await policy.createNamespacedPodDisruptionBudget({
        namespace: ns,
        body: { metadata: { name }, spec: { minAvailable, selector: { matchLabels: { app } } } },
      });
      // Evictions are refused (429) until the disruption controller has processed the budget.
      await eventually(
        async () => {
          const p = await policy.readNamespacedPodDisruptionBudget({ name, namespace: ns });
          if ((p.status?.observedGeneration ?? 0) < (p.metadata?.generation ?? 1))
            throw new Error(`pdb ${name} not yet processed`);
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
    },
    pods,
    async running(ns, count, timeoutMs = 60_000) {
      await eventually(
        async () => {
          const n = (await pods(ns)).filter(ready).length;
          if (n !== count)
            throw new Error(`${String(n)} of ${String(count)} pods running in ${ns}`);
        },
        { timeoutMs, intervalMs: 500 },
      );
    },
  };
}
