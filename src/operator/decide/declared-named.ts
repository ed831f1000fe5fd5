// SPDX-License-Identifier: Apache-2.0
/**
 * The clusters' Kubernetes (docs/adr/0012) and the image policies (docs/adr/0013) as declared, as
 * pools are (ADR 0011): the fleet file's entries and the accepted molt.dev objects — a name the
 * file configures stays the file's. An object whose new spec is refused keeps its last accepted spec,
 * so a typo never turns into an upgrade or a downgrade; one never accepted configures nothing.
 */
import type { KubeUpgrade } from '../../core/kubernetes/types.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import type {
  DeclaredImagePolicy,
  DeclaredKubernetesCluster,
  DeclaredVerdict,
} from '../ports/declared.ts';

/** Objects named like the fleet file's entries, merged with them (the file wins a name). */
export interface DeclaredNamed<T> {
  /** What every pass plans with, by name. */
  readonly specs: ReadonlyMap<string, T>;
  /** Accepted objects by name, to remember as the last accepted. */
  readonly accepted: ReadonlyMap<string, T>;
  readonly verdicts: readonly DeclaredVerdict[];
}

export type DeclaredKubernetes = DeclaredNamed<KubernetesClusterSpec>;

type Named<T> =
  | { readonly name: string; readonly value: T; readonly generation: number }
  | { readonly name: string; readonly invalid: string; readonly generation: number };

/**
 * The fleet file's entries and the declared objects of one kind, by name: an object whose name
 * the file has is refused (`DefinedInFleetFile`); an invalid one keeps its last accepted value in
 * force (`InvalidSpec`); one never accepted configures nothing.
 */
export function declaredNamed<T>(i: {
  readonly kind: DeclaredVerdict['kind'];
  /** What the file configures, for messages: `cluster`, `image policy`. */
  readonly noun: string;
  /** How a value is named in a message: a cluster's version, a policy's repository. */
  readonly label: (value: T) => string;
  readonly objects: readonly Named<T>[];
  readonly file: ReadonlyMap<string, T>;
  readonly lastAccepted: ReadonlyMap<string, T>;
}): DeclaredNamed<T> {
  const specs = new Map(i.file);
  const accepted = new Map<string, T>();
  const verdicts: DeclaredVerdict[] = [];
  for (const o of i.objects) {
    const base = { kind: i.kind, name: o.name, generation: o.generation } as const;
    if (i.file.has(o.name)) {
      verdicts.push({
        ...base,
        accepted: false,
        reason: 'DefinedInFleetFile',
        message: `${i.noun} ${o.name} is configured by the operator's fleet file, which wins`,
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
            : `${o.invalid}; the last accepted spec (${i.label(last)}) stays in force`,
      });
      continue;
    }
    specs.set(o.name, o.value);
    accepted.set(o.name, o.value);
    verdicts.push({ ...base, accepted: true, reason: 'Accepted', message: 'in force' });
  }
  return { specs, accepted, verdicts };
}

/** The clusters' Kubernetes (docs/adr/0012). */
export function declaredKubernetes(i: {
  readonly objects: readonly DeclaredKubernetesCluster[];
  readonly file: ReadonlyMap<string, KubernetesClusterSpec>;
  readonly lastAccepted: ReadonlyMap<string, KubernetesClusterSpec>;
}): DeclaredKubernetes {
  return declaredNamed({
    kind: 'KubernetesCluster',
    noun: 'cluster',
    label: (spec) => spec.version,
    objects: i.objects.map((o) => ('invalid' in o ? o : { ...o, value: o.spec })),
    file: i.file,
    lastAccepted: i.lastAccepted,
  });
}

/** The image policies (docs/adr/0013): the fleet file's `images` and the `ImagePolicy` objects. */
export function declaredImages(i: {
  readonly objects: readonly DeclaredImagePolicy[];
  readonly file: readonly ImagePolicy[];
  readonly lastAccepted: ReadonlyMap<string, ImagePolicy>;
}): DeclaredNamed<ImagePolicy> {
  return declaredNamed({
    kind: 'ImagePolicy',
    noun: 'image policy',
    label: (p) => `${p.repository}, follow ${p.follow.kind}`,
    objects: i.objects.map((o) => ('invalid' in o ? o : { ...o, value: o.policy })),
    file: new Map(i.file.map((p) => [p.name, p])),
    lastAccepted: i.lastAccepted,
  });
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
