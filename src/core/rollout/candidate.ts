// SPDX-License-Identifier: Apache-2.0
/**
 * What the checks judge and return, and the memos that keep plan() allocation-free per machine:
 * on 100 000 machines, building the same sentence 100 000 times cost more than every check.
 */
import type { PlanContext } from './context.ts';
import type { Entry, RolloutShape } from './shape.ts';
import type { Refusal } from './types.ts';

export type { Refusal } from './types.ts';

export interface Candidate {
  readonly ctx: PlanContext;
  readonly shape: RolloutShape;
  /** Reassigned per machine: plan() reuses one candidate per rollout (100 000 machines, no garbage). */
  entry: Entry;
  /** The failure budget of the rollout is spent (in this plan or before). */
  readonly halted: boolean;
}

export type Check = (c: Candidate) => Refusal | undefined;

/**
 * Refusals that depend only on per-plan tallies (rates, concurrency) are built once per tally
 * state, not per machine: their sentences and dates cost more than the check itself.
 */
export function memoized<K extends object>(
  ctx: PlanContext,
  key: K,
  compute: (ctx: PlanContext, key: K) => Refusal | undefined,
): Refusal | undefined {
  const hit = ctx.refusals.get(key);
  if (hit !== undefined && hit.version === ctx.admissions) return hit.refusal;
  const refusal = compute(ctx, key);
  ctx.refusals.set(key, { version: ctx.admissions, refusal });
  return refusal;
}

/**
 * Refusals that no admission changes (windows and gates are fixed for the plan) are built once per
 * plan: rebuilt after each of thousands of admissions, they were a megabyte of garbage a plan.
 */
export function perPlan<K extends object>(
  ctx: PlanContext,
  key: K,
  compute: (ctx: PlanContext, key: K) => Refusal | undefined,
): Refusal | undefined {
  const hit = ctx.refusals.get(key);
  if (hit !== undefined) return hit.refusal;
  const refusal = compute(ctx, key);
  ctx.refusals.set(key, { version: ctx.admissions, refusal });
  return refusal;
}

/**
 * Refusals that depend only on the rollout's shape (fixed for the plan) are built once per rollout
 * and key: -1 rollout state, -2 canaries, 1e6 + wave, 2e6 + 2 × zone rank + role.
 */
const shapeMemos = new WeakMap<RolloutShape, Map<number, Refusal | undefined>>();

export function perShape(c: Candidate, key: number, compute: Check): Refusal | undefined {
  let memo = shapeMemos.get(c.shape);
  if (memo === undefined) {
    memo = new Map();
    shapeMemos.set(c.shape, memo);
  }
  if (memo.has(key)) return memo.get(key);
  const refusal = compute(c);
  memo.set(key, refusal);
  return refusal;
}
