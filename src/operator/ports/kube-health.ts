// SPDX-License-Identifier: Apache-2.0
/**
 * The cluster-side health of the control plane (docs/adr/0012 §4), looked at through the cluster
 * rather than one machine: after each applied component, the API server's `/readyz` answers, or
 * the `kube-controller-manager` / `kube-scheduler` leader Lease in kube-system is renewed after the
 * step started (a controller that came back but cannot lead would not renew it). And the API
 * server's `/metrics`, which the checks read for removed APIs in use. The adapter
 * (`adapters/kube-health`) uses @kubernetes/client-node; `kube-health.fake.ts` is the fake.
 * A gate never throws: a failure is a failing result.
 */
import type { KubeComponent } from '../../core/kubernetes/types.ts';

export interface HealthVerdict {
  readonly ok: boolean;
  readonly message: string;
}

export interface ControlPlaneHealth {
  /**
   * Wait, up to the adapter's deadline, until `component` is healthy through the cluster after a
   * step that started at `since` (epoch ms).
   */
  afterApply(o: {
    readonly cluster: string;
    readonly component: KubeComponent;
    readonly since: number;
  }): Promise<HealthVerdict>;
  /** The API server's `/metrics` text; undefined when the operator reads no cluster. */
  metrics(cluster: string): Promise<string | undefined>;
}

/** Resolves `<repository>:<version>` to a bundle reference by digest. */
export interface BundleResolver {
  /** `host/repository@sha256:…`, or undefined when the registry has no such tag. */
  resolve(repository: string, version: string): Promise<string | undefined>;
  /**
   * Check `bundle` (`host/repository@sha256:…`) again right before an agent is asked to pull it:
   * throws MOLT_SIGNATURE_* when releases must be signed and it is not (a plan recorded before
   * the operator had its key), MOLT_KUBE_BUNDLE_REPOSITORY_REFUSED when it is not in the
   * operator's registry.
   */
  verify(bundle: string): Promise<void>;
}
