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
