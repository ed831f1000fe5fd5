// SPDX-License-Identifier: Apache-2.0
/** KubernetesCluster objects: the clusters' Kubernetes in force, and the plan in each status. */
import type { KubernetesClusterSpec } from '../../../protocol/kube-cluster.ts';
import { declaredKubernetes, kubeClusterStatus } from '../../decide/declared-named.ts';
import { currentDesired } from '../../kubernetes/desired.ts';
import type { DeclaredController, DeclaredDeps } from './controller.ts';

export function kubernetesController(d: DeclaredDeps): DeclaredController {
  let lastAccepted = new Map<string, KubernetesClusterSpec>();
  return {
    async apply(pass) {
      const kube = declaredKubernetes({
        objects: pass.declared.clusters ?? [],
        file: d.fileKubernetes ?? new Map(),
        lastAccepted,
      });
      lastAccepted = new Map(kube.accepted);
      d.setKubernetes?.(kube.specs);
      const read = { store: d.store, declared: () => ({ specs: kube.specs, read: true }) };
      return Promise.all(
        kube.verdicts.map(async (v) => ({
          ...v,
          status: kubeClusterStatus({
            desired: await currentDesired(read, v.name),
            plan: (await d.store.kubeUpgrades(v.name)).at(-1),
          }),
        })),
      );
    },
  };
}
