// SPDX-License-Identifier: Apache-2.0
/** The configuration's `KubernetesClusterSpec` as core's plan reads it. */
import type { DesiredKube } from '../../core/kubernetes/desired.ts';
import type { ExtraArgs, KubeComponent } from '../../core/kubernetes/types.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';

/** Each component's extra arguments, by component name. */
export function componentArgs(
  spec: KubernetesClusterSpec,
): Partial<Record<KubeComponent, ExtraArgs>> {
  return {
    'kube-apiserver': spec.apiserver.extraArgs,
    'kube-controller-manager': spec.controllerManager.extraArgs,
    'kube-scheduler': spec.scheduler.extraArgs,
  };
}

export const desiredOf = (spec: KubernetesClusterSpec): DesiredKube => ({
  version: spec.version,
  extraArgs: componentArgs(spec),
  finalize: spec.finalize,
});
