// SPDX-License-Identifier: Apache-2.0
/**
 * Desired state declared outside the fleet file (docs/adr/0011): in a Kubernetes cluster, molt.dev
 * resources a person or a GitOps tool applies — `Pool`, `MachineHold`, and the action fields of
 * the operator's own `Rollout` objects. The adapter (`adapters/kube-declared`) reads them and
 * reports back on them; the loop (`loop/declared/`) turns them into the same pools, holds and
 * rollout actions the fleet file and the API give. One model behind both sources.
 */
import type { Pool } from '../../core/rollout/types.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import type { MachineRecord } from './store.ts';

/** An object the operator refuses, and why (its first problem, named by field path). */
export interface InvalidObject {
  readonly name: string;
  readonly invalid: string;
  readonly generation: number;
}

/** A declared pool: its parsed settings, or why the operator refuses them. */
export type DeclaredPool = (
  { readonly name: string; readonly pool: Pool; readonly generation: number } | InvalidObject
) & {
  /** Being deleted: its rollouts are cancelled, then the deletion is let through. */
  readonly deleting: boolean;
};

/** A declared hold on one machine; without `until` it lasts until the object is deleted. */
export interface DeclaredHold {
  /** The object's name (holds the operator wrote for it carry `kubernetes:MachineHold/<name>`). */
  readonly name: string;
  readonly machine: string;
  readonly reason: string;
  /** Epoch ms. */
  readonly until?: number;
  /** A pin: the machine stays on this release. */
  readonly version?: string;
  readonly generation: number;
}

/** A declared `KubernetesCluster` (docs/adr/0012): the object's name is the cluster's. */
export type DeclaredKubernetesCluster =
  | { readonly name: string; readonly spec: KubernetesClusterSpec; readonly generation: number }
  | InvalidObject;

/** A declared `ImagePolicy` (docs/adr/0013): the object's name is the policy's. */
export type DeclaredImagePolicy =
  | { readonly name: string; readonly policy: ImagePolicy; readonly generation: number }
  | InvalidObject;

/** What a Rollout object's spec asks of the operator's rollout (level-based; absent: no opinion). */
export interface RolloutRequest {
  /** The operator's rollout id. */
  readonly rollout: string;
  readonly paused?: boolean;
  readonly approved?: boolean;
  readonly cancelled?: boolean;
  readonly rollback?: boolean;
  /** Who last set these fields (the field manager, e.g. `kubectl-patch`, `argocd-controller`). */
  readonly by: string;
}

export interface DeclaredState {
  /**
   * Machines from the cluster's Nodes labelled `node-restriction.kubernetes.io/molt-pool` (each a
   * record, or why the Node is not one); undefined when the operator does not take machines from Nodes.
   */
  readonly machines?: readonly ({ machine: MachineRecord } | { node: string; skipped: string })[];
  readonly pools: readonly DeclaredPool[];
  readonly holds: readonly (DeclaredHold | InvalidObject)[];
  readonly requests: readonly RolloutRequest[];
  /** `KubernetesCluster` objects; undefined from a source that has none. */
  readonly clusters?: readonly DeclaredKubernetesCluster[];
  /** `ImagePolicy` objects; undefined from a source that has none. */
  readonly images?: readonly DeclaredImagePolicy[];
}

/** How the operator judged one declared object, written back as its status. */
export interface DeclaredVerdict {
  readonly kind: 'Pool' | 'MachineHold' | 'KubernetesCluster' | 'ImagePolicy';
  readonly name: string;
  readonly generation: number;
  /** Accepted=True, or the reason it is not. */
  readonly accepted: boolean;
  readonly reason: string;
  readonly message: string;
  /** Extra status fields (a pool's machines and rollouts); `null` removes a field. */
  readonly status?: Readonly<Record<string, unknown>>;
  /** Conditions beside `Accepted` (an ImagePolicy's `GMImageMissing`); the list is written whole. */
  readonly conditions?: readonly VerdictCondition[];
}

/** A status condition besides `Accepted`; the source stamps its transition time. */
export interface VerdictCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

export interface DeclaredSource {
  read(): Promise<DeclaredState>;
  /** Write each object's verdict as its status (only what changed). */
  report(verdicts: readonly DeclaredVerdict[]): Promise<void>;
  /** Let a pool's deletion through (its finalizer removed): nothing of it is in flight. */
  release(pool: string): Promise<void>;
  /** The name of the `Rollout` object that mirrors rollout `id`. */
  objectName(id: string): string;
  /** Warn on an object (a Kubernetes Event): a rollout action that was refused. */
  warn(rollout: string, reason: string, message: string): Promise<void>;
  /** Call `listener` whenever a declared object changes (the source watches them). */
  onChange?(listener: () => void): void;
  /** Stop watching. */
  close?(): Promise<void>;
}
