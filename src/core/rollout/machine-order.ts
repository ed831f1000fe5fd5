// SPDX-License-Identifier: Apache-2.0
/**
 * The order in which a rollout judges its pool's machines (ADR 0005 §1): control plane first, then
 * by zone (the policy's order, then the others by name, machines without a zone last), then by the
 * stable hash of (rollout, machine), ties by id. Cached per snapshot machines array, so simulate
 * (same machines, many plans) sorts once.
 */
import type { PoolRules } from './rules.ts';
import type { Machine, Rollout } from './types.ts';
import { orderHash } from './wariness.ts';

/** One rollout's order of its pool (the pool's machines in the snapshot's order). */
export interface Ordered {
  /** Position k in the rollout's order → index of the machine in the pool. */
  readonly order: Uint32Array;
  /** Zone rank of the machine at each position. */
  readonly ranks: Int32Array;
  readonly zoneNames: readonly string[];
  readonly zones: PoolRules['zones'];
}

const NO_ZONE = '(no zone)';

function zoneTable(machines: readonly Machine[], rules: PoolRules): string[] {
  const zones = rules.zones;
  if (zones === undefined) return [];
  const order = zones.order ?? [];
  const seen = new Set<string>();
  for (const m of machines) {
    const z = m.labels[zones.label];
    if (z !== undefined && !order.includes(z)) seen.add(z);
  }
  return [...order, ...[...seen].sort(), NO_ZONE];
}

const orderCache = new WeakMap<readonly Machine[], Map<string, Ordered>>();
const TWO_POW_32 = 4_294_967_296;
const MAX_ZONE_RANK = 4_095;

function zoneRanks(
  pool: readonly Machine[],
  rules: PoolRules,
  names: readonly string[],
): Int32Array {
  const ranks = new Int32Array(pool.length);
  const label = rules.zones?.label;
  if (label === undefined) return ranks;
  const index = new Map(names.map((z, i) => [z, Math.min(i, MAX_ZONE_RANK)]));
  const none = index.get(NO_ZONE) ?? MAX_ZONE_RANK;
  for (let i = 0; i < pool.length; i++) {
    const z = pool[i]?.labels[label];
    ranks[i] = z === undefined ? none : (index.get(z) ?? none);
  }
  return ranks;
}

/**
 * Sorts by one packed number per machine — role, zone rank, then the 32-bit hash — over an index
 * array: 100 000 machines sort in milliseconds, where comparing objects took hundreds.
 */
function sortOrder(pool: readonly Machine[], ranks: Int32Array, rolloutId: string): Uint32Array {
  const keys = new Float64Array(pool.length);
  const idx = new Uint32Array(pool.length);
  for (let i = 0; i < pool.length; i++) {
    const m = pool[i] as Machine;
    const group = (m.role === 'control-plane' ? 0 : MAX_ZONE_RANK + 1) + (ranks[i] ?? 0);
    keys[i] = group * TWO_POW_32 + orderHash(rolloutId, m.id);
    idx[i] = i;
  }
  const id = (i: number): string => (pool[i] as Machine).id;
  return idx.sort((a, b) => (keys[a] ?? 0) - (keys[b] ?? 0) || (id(a) < id(b) ? -1 : 1));
}

/** The order of `pool` (the machines of `all` in rollout `r`'s pool) for `r`. */
export function ordered(
  all: readonly Machine[],
  pool: readonly Machine[],
  r: Rollout,
  rules: PoolRules,
): Ordered {
  let perRollout = orderCache.get(all);
  if (perRollout === undefined) {
    perRollout = new Map<string, Ordered>();
    orderCache.set(all, perRollout);
  }
  const key = `${r.id}\u0000${r.pool}`;
  const hit = perRollout.get(key);
  if (hit !== undefined && hit.zones === rules.zones && hit.order.length === pool.length) {
    return hit;
  }
  const zoneNames = zoneTable(pool, rules);
  const poolRanks = zoneRanks(pool, rules, zoneNames);
  const order = sortOrder(pool, poolRanks, r.id);
  const ranks = new Int32Array(order.length);
  order.forEach((i, k) => (ranks[k] = poolRanks[i] ?? 0));
  const result: Ordered = { order, ranks, zoneNames, zones: rules.zones };
  perRollout.set(key, result);
  return result;
}
