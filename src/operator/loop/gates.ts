// SPDX-License-Identifier: Apache-2.0
/**
 * Checking the health gates once per pass (docs/adr/0005 §2): every gate policy of the pools and
 * the fleet, concurrently. What the results mean for starts and finished machines is decided in
 * `decide/gates.ts`.
 */
import { gatesOf, type GateResults } from '../decide/gates.ts';
import type { GatePolicy, GateProbe } from '../ports/gates.ts';
import type { ReconcileDeps } from './deps.ts';

const unchecked: GateProbe = {
  check: () => Promise.resolve({ ok: false, message: 'this operator has no gate probe' }),
};

/** Each gate of the pools and the fleet checked once (by name), concurrently; no probe: all fail. */
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
