// SPDX-License-Identifier: Apache-2.0
/**
 * How long start records are kept. They exist for rate limits, which look back one period, so
 * older ones only cost: every pass reads them all, and the Kubernetes store keeps them in the
 * rollout's own object. Kept for the longest rate period of any pool (and the fleet's), and never
 * less than a week, so a period lengthened later still finds the starts it should count. Pure.
 */
import type { Policy } from './policy.ts';
import type { StartRecord } from './types.ts';

/** Starts are kept at least this long, whatever the policies say. */
export const MinStartRetentionMs = 7 * 24 * 3_600_000;

/** The epoch ms before which a start no rate limit counts any more. */
export function startsCutoff(policies: readonly (readonly Policy[])[], now: number): number {
  const periods = policies.flat().flatMap((p) => (p.kind === 'rate' ? [p.periodMs] : []));
  return now - Math.max(MinStartRetentionMs, ...periods);
}

/** Whether any start is older than `cutoff` (a prune would change something). */
export const anyBefore = (starts: readonly StartRecord[], cutoff: number): boolean =>
  starts.some((s) => s.at < cutoff);
