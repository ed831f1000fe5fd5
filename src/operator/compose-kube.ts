// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's Kubernetes parts, chosen by the config's `kubernetes` section (docs/adr/0006 §9):
 * leader election through a coordination Lease, the status mirror into molt.dev custom resources
 * with Events, and the cluster's version for discovery (releases must support it). The Kubernetes client is imported only when the section is there, so
 * operators of fleets without Kubernetes never load it.
 */
import { dirname, resolve } from 'node:path';
import type { LoadedConfig } from './config.ts';
import type { ObservationBook } from './api/observations.ts';
import type { Leadership } from './ports/leadership.ts';
import type { DeclaredSource } from './ports/declared.ts';
import type { OperatorStore } from './ports/store.ts';
import type { ControlPlaneHealth } from './ports/kube-health.ts';

export interface KubeStatusRunner {
  kick(): void;
  stop(): Promise<void>;
}

export interface KubeParts {
  /** Set when the config asks for Lease leader election. */
  readonly leadership?: Leadership;
  /** Set when the config asks for the status mirror. */
  readonly status?: (store: OperatorStore, observations: ObservationBook) => KubeStatusRunner;
  /** The cluster's Kubernetes version, which release ranges (`dev.molt.kubernetes`) must admit. */
  readonly kubernetesVersion?: () => Promise<string>;
  /** Set when the config reads declared molt.dev objects (docs/adr/0011). */
  readonly declared?: DeclaredSource;
  /** The Kubernetes plans' health gates and metrics through the cluster (docs/adr/0012). */
  readonly controlPlaneHealth?: ControlPlaneHealth;
}

export async function kubeParts(
  c: LoadedConfig,
  configPath: string,
  id: string,
  log: (line: string) => void,
): Promise<KubeParts> {
  const k = c.config.kubernetes;
  if (k === undefined) return {};
  const { clusterVersion, loadKubeConfigOrPod } = await import('../platform/kube/client.ts');
  // Without a kubeconfig: the pod's service account (an operator running in the cluster).
  const kc = await loadKubeConfigOrPod(k.kubeconfig && resolve(dirname(configPath), k.kubeconfig));
  // With `store: kubernetes` the store's own Lease already elects the leader (compose-store.ts):
  // a second would be one more client campaigning for nothing.
  const storeLeads = c.config.store !== 'memory' && 'kubernetes' in c.config.store;
  const leadership =
    k.leaderElection && !storeLeads
      ? (await import('./adapters/kube-leadership/leadership.ts')).createKubeLeadership({
          kc,
          namespace: k.namespace,
          id,
          ttlSeconds: Math.max(1, Math.round(c.config.leaderTtl / 1000)),
        })
      : undefined;
  const { startKubeStatus } = await import('./adapters/kube-status/index.ts');
  const declared = k.declared
    ? (await import('./adapters/kube-declared/index.ts')).createKubeDeclared({
        kc,
        namespace: k.namespace,
        now: () => Date.now(),
        nodes: k.nodes,
      })
    : undefined;
  const { createKubeHealth } = await import('./adapters/kube-health/index.ts');
  return {
    kubernetesVersion: () => clusterVersion(kc),
    controlPlaneHealth: createKubeHealth({ kc }),
    ...(declared !== undefined && { declared }),
    ...(leadership !== undefined && { leadership }),
    ...(k.status && {
      status: (store: OperatorStore, observations: ObservationBook) =>
        startKubeStatus({
          kc,
          namespace: k.namespace,
          store,
          pools: () => c.fleet.pools,
          observations,
          now: () => Date.now(),
          log,
        }),
    }),
  };
}
