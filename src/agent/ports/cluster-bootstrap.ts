// SPDX-License-Identifier: Apache-2.0
/**
 * What a cluster's first control-plane machine does once its API server answers (docs/adr/0018
 * §3): make the cluster ready for nodes to join it by TLS bootstrap. Idempotent, so a bootstrap
 * that failed half-way is simply run again.
 */
export interface ClusterBootstrapOutcome {
  /** The RBAC objects applied (server-side: each left as it was when it already matched). */
  readonly rbac: readonly string[];
  /** Whether the token's Secret was created now or was there already. */
  readonly token: 'created' | 'present';
}

export interface ClusterBootstrap {
  /** @throws MoltError `MOLT_KUBE_UNAVAILABLE` (retryable) or `MOLT_KUBE_FORBIDDEN` */
  run(now: Date): Promise<ClusterBootstrapOutcome>;
}
