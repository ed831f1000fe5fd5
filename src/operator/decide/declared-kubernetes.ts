// SPDX-License-Identifier: Apache-2.0
/**
 * The clusters' Kubernetes as declared (docs/adr/0012), as pools are (ADR 0011): the fleet file's
 * `clusters[].kubernetes` and the accepted `KubernetesCluster` objects — a cluster the file
 * configures stays the file's. An object whose new spec is refused keeps its last accepted spec,
 * so a typo never turns into an upgrade or a downgrade; one never accepted configures nothing.
 */
import type { KubeUpgrade } from '../../core/kubernetes/types.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import type { DeclaredKubernetesCluster, DeclaredVerdict } from '../ports/declared.ts';

export interface DeclaredKubernetes {
  /** The spec per cluster every pass plans with. */
  readonly specs: ReadonlyMap<string, KubernetesClusterSpec>;
  /** Accepted objects by name, to remember as the last accepted spec. */
  readonly accepted: ReadonlyMap<string, KubernetesClusterSpec>;
  readonly verdicts: readonly DeclaredVerdict[];
}

export function declaredKubernetes(i: {
  readonly objects: readonly DeclaredKubernetesCluster[];
  readonly file: ReadonlyMap<string, KubernetesClusterSpec>;
  readonly lastAccepted: ReadonlyMap<string, KubernetesClusterSpec>;
}): DeclaredKubernetes {
  const specs = new Map(i.file);
  const accepted = new Map<string, KubernetesClusterSpec>();
  const verdicts: DeclaredVerdict[] = [];
  for (const o of i.objects) {
    const base = { kind: 'KubernetesCluster', name: o.name, generation: o.generation } as const;
    if (i.file.has(o.name)) {
      verdicts.push({
        ...base,
        accepted: false,
        reason: 'DefinedInFleetFile',
        message: `cluster ${o.name} is configured by the operator's fleet file, which wins`,
      });
      continue;
    }
    if ('invalid' in o) {
      const last = i.lastAccepted.get(o.name);
      if (last !== undefined) {
        specs.set(o.name, last);
        accepted.set(o.name, last);
      }
      verdicts.push({
        ...base,
        accepted: false,
        reason: 'InvalidSpec',
        message:
          last === undefined
            ? `${o.invalid}; nothing of it is in force`
            : `${o.invalid}; the last accepted spec (${last.version}) stays in force`,
      });
      continue;
    }
    specs.set(o.name, o.spec);
    accepted.set(o.name, o.spec);
    verdicts.push({ ...base, accepted: true, reason: 'Accepted', message: 'in force' });
  }
  return { specs, accepted, verdicts };
}

/** A type, not an interface: it goes where a `Record<string, unknown>` is wanted. */
export type KubeClusterStatus = {
  readonly desired: { version: string; finalize: boolean; by: string } | null;
  readonly plan: {
    id: string;
    kind: string;
    phase: string;
    target: string;
    by: string;
    progress: string;
    reason?: string;
  } | null;
};

/**
 * What a `KubernetesCluster`'s status says besides its verdict: the desired Kubernetes in force and
 * who set it (a person's request may hold against the object: `kubernetes/desired.ts`), and the
 * cluster's latest plan — so `kubectl get kubernetesclusters` shows an upgrade moving. `null`
 * removes a field.
 */
export function kubeClusterStatus(o: {
  readonly desired: { readonly spec: KubernetesClusterSpec; readonly by: string } | undefined;
  readonly plan: KubeUpgrade | undefined;
}): KubeClusterStatus {
  const { desired, plan } = o;
  return {
    desired:
      desired === undefined
        ? null
        : { version: desired.spec.version, finalize: desired.spec.finalize, by: desired.by },
    plan:
      plan === undefined
        ? null
        : {
            id: plan.id,
            kind: plan.kind,
            phase: plan.phase,
            target: plan.target.version,
            by: plan.by,
            progress: `${String(plan.steps.filter((s) => s.state === 'done').length)}/${String(plan.steps.length)}`,
            ...(plan.reason !== undefined && { reason: plan.reason }),
          },
  };
}
