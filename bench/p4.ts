// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P4: drain a node running 100 pods, with PDBs allowing 10 % disruption, with
 * molt (`platform/kube/node-drain.ts`) and with `kubectl drain` (the same release's kubectl) on the
 * same real control plane, side by side in one run. Target: molt ≤ kubectl.
 *
 * The cluster: etcd 3.5, kube-apiserver, controller-manager, scheduler (testkit), two fake
 * kubelets (`a`, `b`) that run pods Running/Ready every 300 ms. Ten Deployments of 10 replicas,
 * each with a PDB `maxUnavailable: 10%` (one pod of each at a time), all placed on `a` (b cordoned
 * while they start). molt drains `a` (the pods move to `b`); then `a` is uncordoned and kubectl
 * drains `b` (the pods move back). Each drain is timed from its cordon to the last pod gone.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  CoreV1Api,
  PolicyV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { defaultDrainPolicy } from '../src/core/drain/pods.ts';
import { loadKubeConfig } from '../src/platform/kube/client.ts';
import { createNodeDrainer } from '../src/agent/adapters/kube-node/drain.ts';
import { startLabKubelet, type LabKubelet } from '../src/agent/adapters/lab/kubelet-node.ts';
import { startKubeControlPlane } from '../src/lab/services/kube-control-plane.ts';
import { eventually } from '../src/platform/process/managed-process.ts';

const run = promisify(execFile);
const deployments = 10;
const replicas = 10;
const pods = deployments * replicas;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export async function runP4(): Promise<void> {
  const cp = await startKubeControlPlane({ nodes: ['a', 'b'] });
  const kubelets: LabKubelet[] = [];
  try {
    const admin = await loadKubeConfig(cp.admin.kubeconfig);
    for (const name of ['a', 'b'])
      kubelets.push(
        startLabKubelet({
          kc: await loadKubeConfig(cp.node(name).kubeconfig),
          name,
          version: '1',
        }),
      );
    await Promise.all(kubelets.map((k) => k.ready));
    const core = admin.makeApiClient(CoreV1Api);
    const apps = admin.makeApiClient(AppsV1Api);
    const policy = admin.makeApiClient(PolicyV1Api);
    const schedulable = (name: string, yes: boolean) =>
      core.patchNode({ name, body: { spec: { unschedulable: yes ? null : true } } }, merge);
    const onNode = async (name: string) =>
      (
        await core.listNamespacedPod({ namespace: 'p4', fieldSelector: `spec.nodeName=${name}` })
      ).items.filter(
        (p) => p.status?.phase === 'Running' && p.metadata?.deletionTimestamp === undefined,
      ).length;
    await core.createNamespace({ body: { metadata: { name: 'p4' } } });
    await schedulable('b', false);
    for (let i = 0; i < deployments; i++) {
      const app = `app-${String(i)}`;
      await apps.createNamespacedDeployment({
        namespace: 'p4',
        body: {
          metadata: { name: app },
          spec: {
            replicas,
            selector: { matchLabels: { app } },
            template: {
              metadata: { labels: { app } },
              spec: {
                containers: [{ name: 'c', image: 'registry.example/app:1' }],
                terminationGracePeriodSeconds: 1,
              },
            },
          },
        },
      });
      await policy.createNamespacedPodDisruptionBudget({
        namespace: 'p4',
        body: {
          metadata: { name: app },
          spec: { maxUnavailable: '10%', selector: { matchLabels: { app } } },
        },
      });
    }
    const allOn = (name: string) =>
      eventually(
        async () => {
          const n = await onNode(name);
          if (n !== pods) throw new Error(`${String(n)} of ${String(pods)} pods on ${name}`);
        },
        { timeoutMs: 180_000, intervalMs: 500 },
      );
    await allOn('a');
    await schedulable('b', true);
    // Let the disruption controller see every pod healthy before the first drain.
    await new Promise((r) => setTimeout(r, 3_000));

    const drainer = createNodeDrainer({ kc: admin, node: 'a' });
    const t0 = performance.now();
    await drainer.cordon('p4');
    await drainer.drain('p4', { ...defaultDrainPolicy, timeoutMs: 600_000 });
    const moltMs = performance.now() - t0;
    await allOn('b');
    await drainer.uncordon();
    await new Promise((r) => setTimeout(r, 3_000));

    const t1 = performance.now();
    await run(
      `${cp.bins}/kubectl`,
      ['--kubeconfig', cp.admin.kubeconfig, 'drain', 'b', '--ignore-daemonsets', '--timeout=600s'],
      { maxBuffer: 16 << 20 },
    );
    const kubectlMs = performance.now() - t1;
    await allOn('a');

    const ratio = moltMs / kubectlMs;
    console.log(
      `P4: drain ${String(pods)} pods (${String(deployments)} Deployments × ${String(replicas)}, PDB maxUnavailable 10%) on a real control plane (Kubernetes 1.36.3), fake kubelets at 300 ms`,
    );
    console.log(`  molt     ${(moltMs / 1000).toFixed(2)} s`);
    console.log(
      `  kubectl  ${(kubectlMs / 1000).toFixed(2)} s   (kubectl drain, same cluster, pods moving back)`,
    );
    console.log(`  ratio    ${ratio.toFixed(3)} (target ≤ 1)`);
    console.log(
      `BENCH P4 ratio=${ratio.toFixed(3)} molt_ms=${String(Math.round(moltMs))} kubectl_ms=${String(Math.round(kubectlMs))} pods=${String(pods)}`,
    );
  } finally {
    for (const k of kubelets) await k.stop();
    await cp.stop();
  }
}
