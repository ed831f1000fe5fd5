// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's plan on the wire (`GET /v1/plan`, and each machine's decision in a rollout's
 * view): the planner's decisions, the pools' windows and next releases. Same rules as
 * `operator.ts`, which re-exports it.
 */
import { z } from 'zod';
import { DecisionActions } from '../core/rollout/vocabulary.ts';

/** A boolean query parameter: `?explain`, `?explain=1`, `?explain=true`. */
export const queryFlag = z
  .enum(['true', 'false', '1', '0', ''])
  .transform((v) => v === 'true' || v === '1' || v === '');

const Reason = z.object({ code: z.string(), message: z.string() });

/** Where a pool goes next, and the releases it does not take (`GET /v1/plan` `releases`). */
export const PoolReleasesView = z.object({
  pool: z.string(),
  current: z.string().optional(),
  next: z
    .object({
      version: z.string(),
      digest: z.string(),
      path: z.array(z.string()).optional(),
      notBefore: z.string().optional(),
    })
    .optional(),
  notTaken: z.array(
    z.object({ version: z.string(), digest: z.string(), code: z.string(), reason: z.string() }),
  ),
  none: z.string().optional(),
});
export type PoolReleasesView = z.infer<typeof PoolReleasesView>;

/** What the planner decided for one machine, on the operator's last observation of the fleet. */
export const DecisionView = z.object({
  action: z.enum(DecisionActions),
  reason: Reason.optional(),
  /** 0 = canary; 1.. = the batch (wave). */
  batch: z.number().int(),
  notBefore: z.string().optional(),
});
export type DecisionView = z.infer<typeof DecisionView>;

/** Query of `GET /v1/plan`: `explain` lists every refusing check of each waiting machine. */
export const PlanQuery = z.strictObject({ explain: queryFlag.optional() });

/** One decision of `GET /v1/plan`. */
export const PlanDecisionView = DecisionView.extend({
  rollout: z.string(),
  machine: z.string(),
  /** The rollout staged its release on the machine (docs/adr/0019): its start only reboots. */
  staged: z.boolean().optional(),
  /** With `?explain`: every check that refuses the machine, the first being `reason`. */
  refusals: z.array(Reason.extend({ notBefore: z.string().optional() })).optional(),
});
export type PlanDecisionView = z.infer<typeof PlanDecisionView>;

/** The planner's decisions now, on the stored state and the last observation of each machine. */
export const PlanView = z.object({
  at: z.string(),
  /** Whether this operator leads (a standby observes nothing: its machines look unavailable). */
  leader: z.boolean(),
  /** Machines observed / managed, and the oldest observation used. */
  observed: z.object({
    machines: z.number().int(),
    of: z.number().int(),
    oldest: z.string().optional(),
  }),
  decisions: z.array(PlanDecisionView),
  /**
   * Pools with window policies: when starts are allowed from a day before `at` to a day after
   * (every window policy of the pool and the fleet-wide ones must allow). The dashboard's timeline
   * shades them.
   */
  windows: z.array(
    z.object({
      pool: z.string(),
      open: z.array(z.object({ from: z.string(), to: z.string() })),
    }),
  ),
  rollouts: z.array(
    z.object({
      rollout: z.string(),
      verdict: z.enum(['continue', 'halt', 'complete']),
      message: z.string().optional(),
    }),
  ),
  /**
   * Each pool's next release (the next step of its path, or what it promotes) and the newer
   * releases it passes over with the reason (blocked, not reachable, Kubernetes range, …), on the
   * registry's releases now. Absent when the registry could not be read.
   */
  releases: z.array(PoolReleasesView).optional(),
});
export type PlanView = z.infer<typeof PlanView>;
