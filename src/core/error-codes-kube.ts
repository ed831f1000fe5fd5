// SPDX-License-Identifier: Apache-2.0
/** The stable error codes of Kubernetes nodes, drains and the Kubernetes version as configuration: part of {@link ErrorCode}. */
export const kubeCodes = {
  // Kubernetes (docs/adr/0006)
  /** A kubeconfig that is missing, unreadable or names no usable cluster or user. */
  KubeConfigInvalid: 'MOLT_KUBECONFIG_INVALID',
  /** A cluster's PKI (`molt pki kubernetes`) missing a file, exposing a key, invalid or another's. */
  KubePkiInvalid: 'MOLT_KUBE_PKI_INVALID',
  /** The Kubernetes API refused the call (RBAC) — molt's role is missing a permission. */
  KubeForbidden: 'MOLT_KUBE_FORBIDDEN',
  /** The Kubernetes API is unreachable or failing (5xx); retrying may succeed. */
  KubeUnavailable: 'MOLT_KUBE_UNAVAILABLE',
  /** The node this machine is does not exist in the cluster (deleted, or a wrong name). */
  KubeNodeNotFound: 'MOLT_KUBE_NODE_NOT_FOUND',
  /** Pods the drain policy does not allow to be evicted (unmanaged, emptyDir without consent). */
  DrainRefused: 'MOLT_DRAIN_REFUSED',
  /** Pods still on the node when the drain timeout passed (PDBs kept refusing, pods never ended). */
  DrainTimeout: 'MOLT_DRAIN_TIMEOUT',
  /**
   * The drain timed out under `quarantine-and-skip`: the node stays cordoned and labelled
   * `molt.dev/quarantined`, and the operator skips the machine (not a failure of the release).
   */
  DrainQuarantined: 'MOLT_DRAIN_QUARANTINED',
  // The Kubernetes version as configuration (docs/adr/0012)
  /** No Kubernetes bundle for that version in the registry (`<repository>-kubernetes:<version>`). */
  KubeBundleNotFound: 'MOLT_KUBE_BUNDLE_NOT_FOUND',
  /** A bundle that is not one: wrong media types, a binary missing, a version annotation that differs. */
  KubeBundleInvalid: 'MOLT_KUBE_BUNDLE_INVALID',
  /**
   * A `bundleRepository` that is neither the release repository's `-kubernetes` one nor listed in
   * the operator config's `bundleRepositories`: whoever writes the spec does not pick the binaries.
   */
  KubeBundleRepositoryRefused: 'MOLT_KUBE_BUNDLE_REPOSITORY_REFUSED',
  /** A target that skips a minor, or a minor downgrade (Kubernetes' version skew policy). */
  KubeVersionSkew: 'MOLT_KUBE_VERSION_SKEW',
  /**
   * A release whose kubelet (`molt.dev/kubelet-version`) the cluster's API server does not support
   * by Kubernetes' version skew policy (newer than it, or too many minors older): the agent refuses
   * the upgrade before it writes a slot or cordons the node.
   */
  KubeletSkew: 'MOLT_KUBELET_SKEW',
  /** A node's release does not admit the target (its `dev.molt.kubernetes` range). */
  KubeReleaseIncompatible: 'MOLT_KUBE_RELEASE_INCOMPATIBLE',
  /** The configuration sets a flag the target version removed. */
  KubeFlagRemoved: 'MOLT_KUBE_FLAG_REMOVED',
  /** The configuration sets a flag that opens the API server, not named in `forceInsecureFlags`. */
  KubeFlagInsecure: 'MOLT_KUBE_FLAG_INSECURE',
  /** A flag value holds a control character (a newline would break the component's unit). */
  KubeFlagInvalid: 'MOLT_KUBE_FLAG_INVALID',
  /** Clients still call APIs the target removed (the API server's `apiserver_requested_deprecated_apis`). */
  KubeRemovedApiInUse: 'MOLT_KUBE_REMOVED_API_IN_USE',
  /** A minor rollback outside the window the compatibility version (`--emulated-version`) keeps open. */
  KubeDowngradeWindow: 'MOLT_KUBE_DOWNGRADE_WINDOW',
  /** A component did not become healthy on its new spec (its log's tail is in the message). */
  KubeComponentUnhealthy: 'MOLT_KUBE_COMPONENT_UNHEALTHY',
  /** Another Kubernetes upgrade of the cluster runs; one at a time. */
  KubeUpgradeRunning: 'MOLT_KUBE_UPGRADE_RUNNING',
  /** A Kubernetes plan (or a cluster's plans) the operator does not know. */
  KubeUpgradeNotFound: 'MOLT_KUBE_UPGRADE_NOT_FOUND',
  /** The machine runs no control-plane components (a worker, or a control plane molt does not render). */
  NotControlPlane: 'MOLT_NOT_CONTROL_PLANE',
  /** The machine runs no node runtime (no `kubernetes.node` in its config): it keeps no container images. */
  NotKubernetesNode: 'MOLT_NOT_KUBERNETES_NODE',
  /** An image the machine was asked to keep could not be pulled into, or labelled in, its container runtime. */
  ImagePinFailed: 'MOLT_IMAGE_PIN_FAILED',
} as const;
