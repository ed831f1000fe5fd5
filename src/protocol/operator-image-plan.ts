// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/images/plan` (docs/adr/0013 decision 8): the image driver's last plan — what the one
 * planner decided for each workload of each live image rollout, and its verdict on each rollout,
 * as the driver's last pass on the leader left them. Same rules as `operator.ts`.
 */
import { z } from 'zod';
import { PlanDecisionView, RolloutStateSchema } from './operator.ts';

/** One live image rollout the pass planned, as it was then, and the planner's verdict on it. */
export const ImagePlanRolloutView = z.object({
  rollout: z.string(),
  /** `<policy>/<tag>`. */
  pool: z.string(),
  policy: z.string(),
  target: z.object({ version: z.string(), digest: z.string() }),
  state: RolloutStateSchema,
  /** Absent when the planner gave none (a paused rollout, one awaiting approval). */
  verdict: z.enum(['continue', 'halt', 'complete']).optional(),
  message: z.string().optional(),
});
export type ImagePlanRolloutView = z.infer<typeof ImagePlanRolloutView>;

/**
 * The image driver's last plan. `at` absent: no pass yet (a standby, or an operator just
 * started) — then both lists are empty.
 */
export const ImagePlanView = z.object({
  at: z.string().optional(),
  /** Whether this operator leads (only the leader's driver plans; a standby's plan is stale). */
  leader: z.boolean(),
  rollouts: z.array(ImagePlanRolloutView),
  decisions: z.array(PlanDecisionView),
});
export type ImagePlanView = z.infer<typeof ImagePlanView>;
