// SPDX-License-Identifier: Apache-2.0
/**
 * The cluster's Deployments, DaemonSets and StatefulSets as image rollouts change them
 * (docs/adr/0013 §4): listed as `WorkloadView`s, an image changed by one JSON patch whose `test`
 * ops hold the image molt read (so an edit by someone else fails rather than being overwritten),
 * the workload's own rollout progress, and the platforms the Nodes run. The adapter
 * (`adapters/kube-workloads`) uses @kubernetes/client-node; `workloads.fake.ts` is the fake; both
 * pass `testkit/workloads-conformance.ts`.
 */
import type { ImageChange, WorkloadRef, WorkloadView } from '../../core/images/workload.ts';
import type { WorkloadProgress } from '../../core/images/workload-progress.ts';

export type { ImageChange, WorkloadRef, WorkloadView } from '../../core/images/workload.ts';
export type { WorkloadProgress } from '../../core/images/workload-progress.ts';

export interface Workloads {
  /** Every Deployment, DaemonSet and StatefulSet (paged lists). */
  list(): Promise<WorkloadView[]>;
  /**
   * One JSON patch: for each change a `test` op that the container (found by name) is still at its
   * index and still runs `from`, then a `replace` to `to`. All or nothing: a failed test is
   * MOLT_WORKLOAD_EDITED (the message says which container runs what now), a missing workload or
   * container MOLT_WORKLOAD_NOT_FOUND / MOLT_WORKLOAD_EDITED.
   */
  setImages(ref: WorkloadRef, changes: readonly ImageChange[]): Promise<void>;
  /** The workload's rollout progress now. A missing workload is MOLT_WORKLOAD_NOT_FOUND. */
  progress(ref: WorkloadRef): Promise<WorkloadProgress>;
  /** The `os/arch` the cluster's Nodes run (`status.nodeInfo`, else the `kubernetes.io/os` / `arch` labels), sorted, unique. */
  platforms(): Promise<string[]>;
}

/** `Kind/namespace/name`: a workload's planning-unit id (docs/adr/0013 §2). */
export const workloadId = (ref: WorkloadRef): string => `${ref.kind}/${ref.namespace}/${ref.name}`;
