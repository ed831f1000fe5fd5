// SPDX-License-Identifier: Apache-2.0
/**
 * The cluster's Kubernetes as configuration, on a lab of VMs: its `KubernetesCluster` object
 * applied as a person would (the operator reads it as the declared spec), and the operator's
 * plans read back through `molt cluster kubernetes status`.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { readLabStateFile } from '../../../src/lab/state.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import type { KubernetesClusterSpecInput } from '../../../src/protocol/kube-cluster.ts';
import { MoltGroup, MoltVersion } from '../../../src/protocol/kube-resources.ts';
import {
  KubeClusterStatusView,
  type KubePlanView,
} from '../../../src/protocol/operator-kubernetes.ts';
import type { NodeLab } from './node-lab.ts';

const Namespace = 'molt-system';
const Plural = 'kubernetesclusters';

/** Create or replace the `KubernetesCluster` named `cluster` with `spec`. */
export async function applyKubernetesCluster(
  lab: NodeLab,
  cluster: string,
  spec: KubernetesClusterSpecInput,
): Promise<void> {
  const state = await readLabStateFile(lab.dir());
  const api = (await loadKubeConfig(state?.kubeconfig ?? '')).makeApiClient(CustomObjectsApi);
  const where = { group: MoltGroup, version: MoltVersion, namespace: Namespace, plural: Plural };
  const body = {
    apiVersion: `${MoltGroup}/${MoltVersion}`,
    kind: 'KubernetesCluster',
    metadata: { name: cluster, namespace: Namespace },
    spec,
  };
  const existing = (await api
    .getNamespacedCustomObject({ ...where, name: cluster })
    .catch((e: unknown) => {
      if ((e as { code?: number }).code === 404) return undefined;
      throw e;
    })) as { metadata?: { resourceVersion?: string } } | undefined;
  if (existing === undefined) {
    await api.createNamespacedCustomObject({ ...where, body });
    return;
  }
  const metadata = { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion };
  await api.replaceNamespacedCustomObject({ ...where, name: cluster, body: { ...body, metadata } });
}

/**
 * `molt cluster kubernetes status --cluster CLUSTER -o json`, asked again while the operator does
 * not answer in time (for up to 5 minutes): on a lab starved by its VMs, the operator's answer can
 * take longer than a person's command waits, and a poll must not fail for that.
 */
export async function kubeStatus(lab: NodeLab, cluster: string): Promise<KubeClusterStatusView> {
  const until = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      const out = await lab.molt(
        ['cluster', 'kubernetes', 'status', '--cluster', cluster, '-o', 'json'],
        lab.env(),
      );
      return KubeClusterStatusView.parse(JSON.parse(out));
    } catch (e) {
      const busy = /MOLT_OPERATOR_UNREACHABLE/.test((e as { stderr?: string }).stderr ?? '');
      if (!busy || Date.now() >= until) throw e;
      await sleep(10_000);
    }
  }
}

/** The ids of the cluster's plans so far. */
export async function planIds(lab: NodeLab, cluster: string): Promise<Set<string>> {
  return new Set((await kubeStatus(lab, cluster)).plans.map((p) => p.id));
}

/** The first plan to `version` not among `known`, once it has ended (a TCG control plane is slow). */
export async function endedPlan(
  lab: NodeLab,
  cluster: string,
  version: string,
  known: ReadonlySet<string>,
): Promise<KubePlanView> {
  const timeoutMs = 60 * 60_000;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { plan } = await kubeStatus(lab, cluster);
    const ours = plan !== undefined && plan.target.version === version && !known.has(plan.id);
    if (ours && plan.endedAt !== undefined) return plan;
    assert.ok(
      Date.now() < until,
      `no ended plan to ${version} in ${String(timeoutMs)} ms; latest: ${JSON.stringify(plan)}`,
    );
    await sleep(10_000); // a poll interval under a deadline: the plan restarts units on a VM
  }
}
