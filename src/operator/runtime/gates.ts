// SPDX-License-Identifier: Apache-2.0
/**
 * Checking the health gates once per pass (docs/adr/0005 §2): every gate policy of the pools and
 * the fleet, concurrently; the planner reads the results from the snapshot (a start waits for all
 * gates that apply), and `progress.ts` holds a finished machine until its pool's gates pass.
 */
import type { GateResult, Policy, Pool } from '../../core/rollout/types.ts';
import type { GatePolicy, GateProbe } from '../ports/gates.ts';
import type { ReconcileDeps } from './deps.ts';

const gatesOf = (policies: readonly Policy[]): GatePolicy[] =>
  policies.filter((p): p is GatePolicy => p.kind === 'gate');

const unchecked: GateProbe = {
  check: () => Promise.resolve({ ok: false, message: 'this operator has no gate probe' }),
};

export type GateResults = Readonly<Record<string, GateResult>>;

export async function checkGates(d: ReconcileDeps): Promise<GateResults> {
  const all = new Map<string, GatePolicy>();
  for (const g of [
    ...d.settings.pools.flatMap((p) => gatesOf(p.policies)),
    ...gatesOf(d.settings.fleetPolicies),
  ])
    all.set(g.name, g);
  const probe = d.gates ?? unchecked;
  const results = await Promise.all(
    [...all.values()].map(async (g) => [g.name, await probe.check(g)] as const),
  );
  return Object.fromEntries(results);
}

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
