// SPDX-License-Identifier: Apache-2.0
/** What the Kubernetes plans of the operator need (docs/adr/0012 §4); `compose-kubernetes.ts` builds it. */
import type { Release } from '../../core/releases/release.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import type { KubeAgents } from '../ports/kube-agents.ts';
import type { BundleResolver, ControlPlaneHealth } from '../ports/kube-health.ts';
import type { MachineRecord, OperatorStore } from '../ports/store.ts';

/**
 * The declared Kubernetes of each cluster as last read: the fleet file's `clusters[].kubernetes`
 * and the accepted molt.dev `KubernetesCluster` objects. `read` is false until the objects have
 * been read once (always true when the operator reads none): until then a cluster the file does
 * not define has an unknown declared spec, not "none" — a request made then is not overturned by
 * the first read (`desired.ts`).
 */
export interface DeclaredKubernetes {
  readonly specs: ReadonlyMap<string, KubernetesClusterSpec>;
  readonly read: boolean;
}

export interface KubePlanDeps {
  readonly store: OperatorStore;
  readonly agents: KubeAgents;
  readonly health: ControlPlaneHealth;
  readonly bundles: BundleResolver;
  /** Discovery's releases (the `dev.molt.kubernetes` range of what each machine boots). */
  readonly releases: () => Promise<readonly Release[]>;
  /** The digest of the release a machine boots, as its agent says; undefined when unknown. */
  readonly booted: (machine: MachineRecord) => Promise<string | undefined>;
  /** The declared Kubernetes of each cluster, read each pass (`DeclaredKubernetes`). */
  readonly declared: () => DeclaredKubernetes;
  /** Where bundles live when the spec names no repository (the release repository + `-kubernetes`). */
  readonly bundleRepository: string;
  /** Other repositories (same registry) a spec's `bundleRepository` may name. @default none */
  readonly bundleRepositories?: readonly string[];
  readonly now: () => number;
  readonly log: (line: string) => void;
  /** Only the leader runs steps; a deposed one stops before its next step. */
  readonly isLeader: () => boolean;
  /** Waits between attempts of a step whose agent did not answer. @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What the Kubernetes routes need: the plans' dependencies and a way to start a runner now. */
export interface KubernetesApi {
  readonly plans: KubePlanDeps;
  readonly kick: (cluster: string) => void;
}
