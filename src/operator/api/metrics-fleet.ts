// SPDX-License-Identifier: Apache-2.0
/**
 * Metrics of the fleet as the leader last saw it (docs/adr/0009, `deploy/monitoring`): whether
 * each machine's agent answered, how many machines boot each release, and the FleetLock groups'
 * slots. The first two come from the loop's observations, which only the leader makes: a standby
 * exposes none of them, so summing over operators counts each machine once.
 */
import { booted } from '../decide/observation.ts';
import type { FleetLockStore } from '../ports/fleetlock-store.ts';
import type { StoredState } from '../ports/store.ts';
import { family, sample } from './exposition.ts';
import type { FleetLockGroup } from './fleetlock-groups.ts';
import type { ObservationBook } from './observations.ts';

/** One FleetLock group: slots it grants, and how many are held. */
export interface FleetLockSlots {
  readonly group: string;
  readonly slots: number;
  readonly holders: number;
}

export interface FleetMetricsInput {
  readonly state: StoredState;
  readonly leader: boolean;
  readonly observations?: ObservationBook;
  readonly fleetLock?: readonly FleetLockSlots[];
}

function machineFamilies(state: StoredState, book: ObservationBook): string[] {
  const reachable: string[] = [];
  const byRelease = new Map<string, { pool: string; version: string; count: number }>();
  for (const m of state.machines) {
    const seen = book.get(m.id);
    if (seen !== undefined)
      reachable.push(
        sample(
          'molt_operator_agent_reachable',
          { machine: m.id, pool: m.pool },
          seen.status ? 1 : 0,
        ),
      );
    const version = (seen?.status && booted(seen.status).version) ?? 'unknown';
    const key = `${m.pool}\0${version}`;
    const entry = byRelease.get(key) ?? { pool: m.pool, version, count: 0 };
    entry.count++;
    byRelease.set(key, entry);
  }
  return [
    ...family(
      'molt_operator_agent_reachable',
      'gauge',
      "1 when the machine's agent answered the leader's last look, 0 when it did not.",
      reachable,
    ),
    ...family(
      'molt_operator_machines_by_release',
      'gauge',
      'Managed machines by pool and the release version their agent last reported (unknown: never answered).',
      [...byRelease.values()].map((e) =>
        sample('molt_operator_machines_by_release', { pool: e.pool, version: e.version }, e.count),
      ),
    ),
  ];
}

function fleetLockFamilies(groups: readonly FleetLockSlots[]): string[] {
  return [
    ...family(
      'molt_operator_fleetlock_slots',
      'gauge',
      'Reboot slots a FleetLock group grants at once.',
      groups.map((g) => sample('molt_operator_fleetlock_slots', { group: g.group }, g.slots)),
    ),
    ...family(
      'molt_operator_fleetlock_holders',
      'gauge',
      'FleetLock slots held (by Zincati or molt agents) per group.',
      groups.map((g) => sample('molt_operator_fleetlock_holders', { group: g.group }, g.holders)),
    ),
  ];
}

/** A standby's families: named, without samples (it observes nothing). */
const none: ObservationBook = {
  get: () => undefined,
  lastAnswer: () => undefined,
  gates: () => ({}),
};

export function fleetFamilies(i: FleetMetricsInput): string[] {
  const book = i.leader ? i.observations : undefined;
  const machines = machineFamilies(
    book === undefined ? { ...i.state, machines: [] } : i.state,
    book ?? none,
  );
  return [...machines, ...fleetLockFamilies(i.fleetLock ?? [])];
}

/** The slots and holders of each group (one per pool) molt serves, read from the store. */
export async function readFleetLockSlots(
  pools: readonly string[],
  groups: (group: string) => FleetLockGroup | undefined,
  store: FleetLockStore,
): Promise<FleetLockSlots[]> {
  const out: FleetLockSlots[] = [];
  for (const group of pools) {
    const served = groups(group);
    if (served === undefined) continue;
    const { sem } = await store.read(group);
    out.push({ group, slots: served.slots, holders: sem?.holders.length ?? 0 });
  }
  return out;
}
