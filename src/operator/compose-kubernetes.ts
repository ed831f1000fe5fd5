// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's Kubernetes plans, composed (docs/adr/0012 §4): the agents' control-plane routes
 * over mTLS, the bundles in the operator's registry (`<repository>-kubernetes` unless a cluster
 * names another), the cluster-side health gates when the config reads a cluster (without one the
 * agent's own "healthy" answer is the gate, and removed APIs cannot be looked at), and the desired
 * spec per cluster through one getter (`declaredKubernetes`) the loop calls every pass.
 */
import type { KubernetesClusterSpec } from '../protocol/kube-cluster.ts';
import { createKubeAgents } from './adapters/kube-agents/index.ts';
import { createOciBundleResolver } from './adapters/oci-bundles/index.ts';
import type { KubernetesApi } from './kubernetes/deps.ts';
import type { LoadedConfig } from './config.ts';
import { booted } from './decide/observation.ts';
import type { KubePlanDeps } from './kubernetes/deps.ts';
import { createKubePlanDriver, type KubePlanDriver } from './kubernetes/driver.ts';
import type { AgentGateway } from './ports/agents.ts';
import type { ControlPlaneHealth } from './ports/kube-health.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';
import type { Release } from '../core/releases/release.ts';

/**
 * The desired Kubernetes of each cluster, read when called: the fleet file's
 * `clusters[].kubernetes`. (molt.dev `KubernetesCluster` objects join here.)
 */
export function declaredKubernetes(
  c: LoadedConfig,
): () => ReadonlyMap<string, KubernetesClusterSpec> {
  return () => {
    const found = new Map<string, KubernetesClusterSpec>();
    for (const cluster of c.fleet.clusters ?? [])
      if (cluster.kubernetes !== undefined) found.set(cluster.name, cluster.kubernetes);
    return found;
  };
}

/** Without a cluster to read: the agent's apply answered healthy; that is the gate. */
const agentsOnly: ControlPlaneHealth = {
  afterApply: () =>
    Promise.resolve({
      ok: true,
      message: 'the agent answered healthy (the operator reads no cluster)',
    }),
  metrics: () => Promise.resolve(undefined),
};

export interface KubernetesPlans {
  readonly driver: KubePlanDriver;
  readonly api: KubernetesApi;
  close(): Promise<void>;
}

export function kubernetesPlans(
  c: LoadedConfig,
  o: {
    readonly store: OperatorStore;
    readonly leadership: Leadership;
    readonly gateway: AgentGateway;
    readonly releases: () => Promise<readonly Release[]>;
    readonly health?: ControlPlaneHealth | undefined;
    readonly log: (line: string) => void;
  },
): KubernetesPlans {
  const agents = createKubeAgents(c.pki);
  const deps: KubePlanDeps = {
    store: o.store,
    agents,
    health: o.health ?? agentsOnly,
    bundles: createOciBundleResolver({ registry: c.config.registry, insecure: c.config.insecure }),
    releases: o.releases,
    booted: async (m) => booted(await o.gateway.status(m)).digest,
    declared: declaredKubernetes(c),
    bundleRepository: `${c.config.repository}-kubernetes`,
    now: () => Date.now(),
    log: o.log,
    isLeader: () => o.leadership.isLeader(),
  };
  const driver = createKubePlanDriver(deps);
  return {
    driver,
    api: {
      plans: deps,
      kick: (cluster) => {
        driver.kick(cluster);
      },
    },
    async close() {
      await driver.stop();
      await agents.close();
    },
  };
}
