// SPDX-License-Identifier: Apache-2.0
/**
 * A workload as image rollouts see it (docs/adr/0013 §2): what it is, its labels, the images its
 * containers run, and whether its own rollout is done. Read by the `Workloads` port.
 */
import type { WorkloadKind } from './types.ts';

export interface WorkloadView {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly containers: readonly {
    readonly name: string;
    readonly image: string;
    readonly init?: boolean;
  }[];
  /** `workloadProgress(...).state === 'available'` */
  readonly available: boolean;
}

export interface WorkloadRef {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
}

/** One container's image, from what molt read to what it writes. */
export interface ImageChange {
  /** The container's name (an init container's too). */
  readonly container: string;
  readonly from: string;
  readonly to: string;
}

/**
 * What an image rollout changes (docs/adr/0013 decision 9), kept on its `Rollout`: the policy, the
 * repository, and per unit the changes molt made — each container's image before and after,
 * recorded before the change is written, so a rollback writes them back under the same test.
 */
export interface ImageRolloutRecord {
  readonly policy: string;
  readonly repository: string;
  /** Per unit id (`Kind/namespace/name`): the changes made or being made. */
  readonly units: Readonly<Record<string, { readonly changes: readonly ImageChange[] }>>;
}

/** `Kind/namespace/name` → the workload it names; undefined when it is not one. */
export function workloadRefOf(id: string): WorkloadRef | undefined {
  const [kind, namespace, name, ...rest] = id.split('/');
  if (rest.length > 0 || namespace === undefined || name === undefined) return undefined;
  if (kind !== 'Deployment' && kind !== 'DaemonSet' && kind !== 'StatefulSet') return undefined;
  return { kind, namespace, name };
}

/**
 * How people read a history kind: an image rollout's unit is a workload, so its `machine-start`
 * and `machine-result` read `workload-start` and `workload-result`. Stores, notifications and
 * Events keep the one kind (sinks filter on it); only what people read says workload.
 */
export function historyKindLabel(kind: string, unit: string | undefined): string {
  const workload = unit !== undefined && workloadRefOf(unit) !== undefined;
  return workload && kind.startsWith('machine-')
    ? `workload-${kind.slice('machine-'.length)}`
    : kind;
}
