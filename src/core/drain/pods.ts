// SPDX-License-Identifier: Apache-2.0
/**
 * Which pods a drain evicts, skips or refuses (docs/adr/0006), as `kubectl drain` decides it:
 * DaemonSet pods are skipped (their controller would put them straight back and they tolerate
 * unschedulable), mirror pods (static pods) are skipped (the API cannot delete them), finished or
 * already-terminating pods need nothing; a pod with emptyDir data is evicted only when the policy
 * says that data may go — or when the pod itself says so of each of its emptyDir volumes, by
 * cluster-autoscaler's annotation {@link SafeToEvictLocalVolumes} (a scratch /tmp under a
 * read-only root, for one: molt's own operator has one) — and a pod no controller owns only with
 * `force` (nothing recreates it). Pure: pod facts in, a decision with reasons out.
 */

/**
 * A pod's list of its volumes whose data may be lost on eviction (comma-separated names): the
 * annotation cluster-autoscaler honours for scale-down, so workloads already carry it. kubectl
 * drain does not read it; molt does, because its drains run unattended where kubectl's are run by
 * a person who can add a flag for one pod.
 */
export const SafeToEvictLocalVolumes =
  'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes';

/** Whether a pod keeps emptyDir data it has not declared disposable ({@link SafeToEvictLocalVolumes}). */
export function keepsEmptyDirData(
  volumes: readonly { readonly name: string; readonly emptyDir?: unknown }[],
  annotations: Readonly<Record<string, string>> | undefined,
): boolean {
  const disposable = new Set(
    (annotations?.[SafeToEvictLocalVolumes] ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== ''),
  );
  return volumes.some((v) => v.emptyDir !== undefined && !disposable.has(v.name));
}

/** What a drain needs to know of a pod (the adapter reads it from the API). */
export interface PodFacts {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** Kind of the controlling owner reference (`ReplicaSet`, `StatefulSet`, `DaemonSet`, …). */
  readonly controllerKind?: string;
  /** Has the `kubernetes.io/config.mirror` annotation. */
  readonly mirror: boolean;
  /** `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`. */
  readonly phase: string;
  /** Has a deletionTimestamp. */
  readonly terminating: boolean;
  /** Mounts an emptyDir volume whose data dies with the pod and that it did not call disposable. */
  readonly emptyDir: boolean;
}

/** What happens when pods are still there at the drain's deadline. */
export const DrainTimeoutActions = [
  'abort-and-uncordon',
  'quarantine-and-skip',
  'force-delete',
] as const;
export type DrainTimeoutAction = (typeof DrainTimeoutActions)[number];

export interface DrainPolicy {
  /** How long evictions may keep being refused (PDBs) and evicted pods may take to go. */
  readonly timeoutMs: number;
  readonly onTimeout: DrainTimeoutAction;
  /** Evict pods with emptyDir volumes (their data is lost). @default false, as kubectl */
  readonly deleteEmptyDirData: boolean;
  /** Evict pods no controller owns (nothing recreates them). @default false, as kubectl */
  readonly force: boolean;
}

/**
 * What a rollout may override of a machine's drain policy (the pool's `drain` in the fleet file,
 * sent with the upgrade request); unset fields keep the machine's own config.
 */
export interface DrainOverride {
  readonly timeoutSeconds?: number | undefined;
  readonly onTimeout?: DrainTimeoutAction | undefined;
}

/** `base` with `override` applied. */
export function withOverride(base: DrainPolicy, override: DrainOverride | undefined): DrainPolicy {
  if (override === undefined) return base;
  return {
    ...base,
    ...(override.timeoutSeconds !== undefined && { timeoutMs: override.timeoutSeconds * 1000 }),
    ...(override.onTimeout !== undefined && { onTimeout: override.onTimeout }),
  };
}

export const defaultDrainPolicy: DrainPolicy = {
  timeoutMs: 10 * 60_000,
  onTimeout: 'abort-and-uncordon',
  deleteEmptyDirData: false,
  force: false,
};

export interface PodDecision {
  readonly pod: PodFacts;
  readonly reason: string;
}

export interface DrainDecision {
  readonly evict: readonly PodFacts[];
  /** Left alone, and fine to leave. */
  readonly skip: readonly PodDecision[];
  /** Would have to go, but the policy forbids evicting them: the drain must not start. */
  readonly refuse: readonly PodDecision[];
}

function skipReason(p: PodFacts): string | undefined {
  if (p.mirror) return 'a mirror (static) pod';
  if (p.controllerKind === 'DaemonSet') return 'managed by a DaemonSet';
  if (p.phase === 'Succeeded' || p.phase === 'Failed') return `finished (${p.phase})`;
  if (p.terminating) return 'already terminating';
  return undefined;
}

function refuseReason(p: PodFacts, policy: DrainPolicy): string | undefined {
  if (p.controllerKind === undefined && !policy.force)
    return 'no controller owns it, so nothing would recreate it (drain policy force: true allows it)';
  if (p.emptyDir && !policy.deleteEmptyDirData)
    return `it has emptyDir data that eviction deletes (drain policy deleteEmptyDirData: true allows it, or the pod's annotation ${SafeToEvictLocalVolumes} naming those volumes)`;
  return undefined;
}

export const podName = (p: Pick<PodFacts, 'namespace' | 'name'>): string =>
  `${p.namespace}/${p.name}`;

/** Decide every pod on the node. */
export function decideDrain(pods: readonly PodFacts[], policy: DrainPolicy): DrainDecision {
  const evict: PodFacts[] = [];
  const skip: PodDecision[] = [];
  const refuse: PodDecision[] = [];
  for (const pod of pods) {
    const skipped = skipReason(pod);
    if (skipped !== undefined) {
      skip.push({ pod, reason: skipped });
      continue;
    }
    const refused = refuseReason(pod, policy);
    if (refused === undefined) evict.push(pod);
    else refuse.push({ pod, reason: refused });
  }
  return { evict, skip, refuse };
}
