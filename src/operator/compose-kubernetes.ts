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
import type { DeclaredKubernetes, KubernetesApi } from './kubernetes/deps.ts';
import type { LoadedConfig } from './config.ts';
import { booted } from './decide/observation.ts';
import type { KubePlanDeps } from './kubernetes/deps.ts';
import { createKubePlanDriver, type KubePlanDriver } from './kubernetes/driver.ts';
import type { AgentGateway } from './ports/agents.ts';
import type { ControlPlaneHealth } from './ports/kube-health.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';
import type { Release } from '../core/releases/release.ts';

/** The fleet file's `clusters[].kubernetes` by cluster name. */
export function fileKubernetes(c: LoadedConfig): ReadonlyMap<string, KubernetesClusterSpec> {
  const found = new Map<string, KubernetesClusterSpec>();
  for (const cluster of c.fleet.clusters ?? [])
    if (cluster.kubernetes !== undefined) found.set(cluster.name, cluster.kubernetes);
  return found;
}

/**
 * The declared Kubernetes of each cluster, live: the fleet file's at start, then what each pass of
 * the declared runner sets (the file's and the accepted molt.dev `KubernetesCluster` objects,
 * the file winning a name both define). Unread until that first pass when the config reads
 * declared objects.
 */
export function liveKubernetes(c: LoadedConfig): {
  readonly fileKubernetes: ReadonlyMap<string, KubernetesClusterSpec>;
  readonly declared: () => DeclaredKubernetes;
  readonly setKubernetes: (specs: ReadonlyMap<string, KubernetesClusterSpec>) => void;
} {
  const file = fileKubernetes(c);
  let view: DeclaredKubernetes = { specs: file, read: c.config.kubernetes?.declared !== true };
  return {
    fileKubernetes: file,
    declared: () => view,
    setKubernetes: (specs) => {
      view = { specs, read: true };
    },
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
    /** The desired spec per cluster, live. @default the fleet file's */
    readonly declared?: (() => DeclaredKubernetes) | undefined;
  },
): KubernetesPlans {
  const agents = createKubeAgents(c.pki);
  const deps: KubePlanDeps = {
    store: o.store,
    agents,
    health: o.health ?? agentsOnly,
    bundles: createOciBundleResolver({
      registry: c.config.registry,
      insecure: c.config.insecure,
      ...(c.publicKeyPem !== undefined && { publicKeyPem: c.publicKeyPem }),
    }),
    releases: o.releases,
    booted: async (m) => booted(await o.gateway.status(m)).digest,
    declared: o.declared ?? liveKubernetes(c).declared,
    bundleRepository: `${c.config.repository}-kubernetes`,
    bundleRepositories: c.config.bundleRepositories,
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
