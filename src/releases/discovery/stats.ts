// SPDX-License-Identifier: Apache-2.0
import type { RequestStats } from '../../oci/types.ts';

/** A copy of the reader's live counters. */
export function statsSnapshot(s: RequestStats): RequestStats {
  return { ...s };
}

/** `after - before`, counter by counter: the requests one scan made. */
export function statsDelta(before: RequestStats, after: RequestStats): RequestStats {
  const out = { ...after };
  for (const k of Object.keys(out) as (keyof RequestStats)[]) out[k] = after[k] - before[k];
  return out;
}
