// SPDX-License-Identifier: Apache-2.0
/**
 * The machine's Kubernetes node. Until the Kubernetes work lands the adapter reports every step
 * as skipped (`not in a cluster`) and the runner logs it as such.
 */
import type { DrainOverride } from '../../core/drain/pods.ts';
import type { ApiServerVersion } from '../../core/kubernetes/kubelet-skew.ts';

export type KubeOutcome =
  { readonly status: 'done' } | { readonly status: 'skipped'; readonly reason: string };

export interface KubeNode {
  cordon(operationId: string): Promise<KubeOutcome>;
  /** With the rollout's `override` over the machine's own drain policy, when it sent one. */
  drain(operationId: string, override?: DrainOverride): Promise<KubeOutcome>;
  /** Only undoes molt's own cordon (never a cordon someone else set). */
  uncordon(operationId: string): Promise<KubeOutcome>;
  ready(): Promise<KubeOutcome>;
  /**
   * The cluster's API server version (`GET /version` with the agent's own kubeconfig), for the
   * kubelet skew check before an upgrade. Absent on a machine outside a cluster (no check).
   */
  apiServer?(): Promise<ApiServerVersion>;
}
