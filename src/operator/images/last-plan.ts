// SPDX-License-Identifier: Apache-2.0
/**
 * The image driver's last plan (docs/adr/0013 decision 8): each pass on the leader writes what the
 * one planner decided over the live image rollouts, with those rollouts as it planned them; the
 * API reads it (`GET /v1/images/plan`, the decisions on an image rollout's units), and the declared
 * runner the selection (each `ImagePolicy`'s `Following` condition). In memory only:
 * a restarted operator or a standby has no pass yet, and says so.
 */
import type { Selection } from '../../core/images/units.ts';
import type { Plan, Rollout } from '../../core/rollout/types.ts';

/** One pass's plan, the live image rollouts it planned, and what each policy selected. */
export interface ImagePlanRecord {
  readonly plan: Plan;
  readonly rollouts: readonly Rollout[];
  /** The pass's selection (an `ImagePolicy`'s `Following` condition reads it). */
  readonly selection?: Selection;
}

export interface ImagePlanHolder {
  /** The driver, once per pass, after planning. */
  set(plan: Plan, rollouts: readonly Rollout[], selection?: Selection): void;
  /** The last pass's, or undefined before the first. */
  last(): ImagePlanRecord | undefined;
}

export function createImagePlanHolder(): ImagePlanHolder {
  let last: ImagePlanRecord | undefined;
  return {
    set: (plan, rollouts, selection) => {
      last = { plan, rollouts: [...rollouts], ...(selection !== undefined && { selection }) };
    },
    last: () => last,
  };
}
