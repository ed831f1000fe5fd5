// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's Kubernetes cluster as the rest of the lab uses it, wherever it runs: the host's
 * control plane (services/kube-control-plane.ts, the default) or control-plane VMs
 * (`--vm-control-planes`, vm/vm-cluster.ts). Each gives VM nodes what they join with
 * ({@link NodeCluster}).
 */
import type { KubeControlPlane } from './services/kube-control-plane.ts';
import type { VmCluster } from './vm/vm-cluster.ts';

export interface LabKube {
  /** The API server's URL as the host reaches it. */
  readonly server: string;
  /** Directory of the host's Kubernetes binaries (kubectl). */
  readonly bins: string;
  readonly admin: { readonly kubeconfig: string };
  readonly operator: { readonly kubeconfig: string };
  /**
   * A cluster on VMs: the control plane its VMs' releases carry (`molt image build
   * --kubernetes-control-plane DIR`), so every later release keeps it.
   */
  readonly controlPlaneImage?: string;
  stop(): Promise<void>;
}

/** What a VM node joins its cluster with. */
export interface NodeCluster {
  readonly server: string;
  /** PEM of the cluster CA. */
  readonly ca: string;
  /** A bootstrap token the cluster knows (made now, or the PKI's). */
  bootstrapToken(): Promise<string>;
  /** The kubeconfig `user` of VM `name`'s agent (`molt:agent:<name>`). */
  agentUser(name: string): Readonly<Record<string, string>>;
}

/** The host's control plane: a new token, and agents by the bearer tokens it knows. */
export const hostNodeCluster = (kube: KubeControlPlane): NodeCluster => ({
  server: kube.server,
  ca: kube.ca,
  bootstrapToken: () =>
    kube.bootstrapToken({ ttlSeconds: 24 * 3600, description: 'molt lab VMs joining as nodes' }),
  agentUser: (name) => ({ token: kube.agent(name).token }),
});

/** A cluster on VMs: the PKI's token, and agents by client certificates of its CA. */
export const vmNodeCluster = (c: VmCluster): NodeCluster => ({
  server: c.server,
  ca: c.ca,
  bootstrapToken: () => Promise.resolve(c.bootstrapToken),
  agentUser: (name) => c.agentUser(name),
});
