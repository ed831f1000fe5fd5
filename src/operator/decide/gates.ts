// SPDX-License-Identifier: Apache-2.0
/**
 * The health gates' results as decisions read them (docs/adr/0005 §2): the planner takes them from
 * the snapshot (a start waits for all gates that apply), and `progress.ts` holds a finished
 * machine until its pool's gates pass. Checking them is the loop's (`loop/gates.ts`).
 */
import type { GateResult, Policy, Pool } from '../../core/rollout/types.ts';
import type { GatePolicy } from '../ports/gates.ts';

/** Each gate's last result, by gate name. */
export type GateResults = Readonly<Record<string, GateResult>>;

/** The gate policies among `policies`. */
export const gatesOf = (policies: readonly Policy[]): GatePolicy[] =>
  policies.filter((p): p is GatePolicy => p.kind === 'gate');

/** The first gate of `pool` (or of the fleet) that is not passing, as a sentence; undefined if all pass. */
export function failingGate(
  pool: Pool | undefined,
  fleet: readonly Policy[],
  results: GateResults,
): string | undefined {
  for (const g of [...gatesOf(pool?.policies ?? []), ...gatesOf(fleet)]) {
    const r = results[g.name];
    if (r?.ok !== true)
      return `health gate ${g.name} ${r === undefined ? 'not checked' : `failing: ${r.message}`}`;
  }
  return undefined;
}
