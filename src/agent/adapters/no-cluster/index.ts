// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes node of a machine that is not in a cluster: every step is skipped, and the
 * runner logs it as skipped, so the event log says plainly that nothing was drained.
 */
import type { KubeNode, KubeOutcome } from '../../ports/kube-node.ts';

const skipped: KubeOutcome = { status: 'skipped', reason: 'not in a Kubernetes cluster' };

export function createNoClusterKubeNode(): KubeNode {
  return {
    cordon: () => Promise.resolve(skipped),
    drain: () => Promise.resolve(skipped),
    uncordon: () => Promise.resolve(skipped),
    ready: () => Promise.resolve(skipped),
  };
}
