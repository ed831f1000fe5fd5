// SPDX-License-Identifier: Apache-2.0
/**
 * The policies that apply to one pool, resolved once per plan: the pool's own plus the fleet's.
 * Limits (concurrency, rate) are counted per scope — the pool for a pool policy, the whole fleet
 * for a fleet policy — so a fleet rule is one shared object whose tally every pool sees. Rollout
 * shapes (canary, batches, zones, machine soak, failure budget) are per rollout: the pool's policy
 * wins over the fleet's when both have one (a fleet policy is the default for every pool).
 */
import type { Policy, PolicyKind, Pool, StartRecord, Window } from './types.ts';

export const FLEET_SCOPE = 'fleet';
export const poolScope = (pool: string): string => `pool:${pool}`;

export type PolicyOf<K extends PolicyKind> = Extract<Policy, { readonly kind: K }>;

export function ofKind<K extends PolicyKind>(policies: readonly Policy[], kind: K): PolicyOf<K>[] {
  return policies.filter((p): p is PolicyOf<K> => p.kind === kind);
}

/** `pool workers` or `the fleet`, for messages. */
export const scopeLabel = (scope: string): string =>
  scope === FLEET_SCOPE ? 'the fleet' : `pool ${scope.slice('pool:'.length)}`;

export interface ConcurrencyRule {
  readonly scope: string;
  readonly limit: number;
  /** `3` or `3 = 25% of 12`. */
  readonly describe: string;
}

/** A sliding-window rate; `times` are the recorded starts in `(now − period, now]`, oldest first. */
export interface RateRule {
  readonly scope: string;
  readonly count: number;
  readonly periodMs: number;
  readonly times: readonly number[];
  /** Starts admitted by the plan being built (at `now`). */
  admitted: number;
}

export interface WindowRule {
  readonly windows: readonly Window[];
  readonly exclusions?: readonly Window[];
}

export interface PoolRules {
  readonly windows: readonly WindowRule[];
  readonly rates: readonly RateRule[];
  readonly concurrency: readonly ConcurrencyRule[];
  readonly canary: PolicyOf<'canary'> | undefined;
  readonly batches: PolicyOf<'batches'> | undefined;
  readonly zones: PolicyOf<'zones'> | undefined;
  readonly machineSoakMs: number;
  readonly controlPlaneFirst: boolean;
  readonly maxFailed: number;
  /** Wave size with a batch soak: the tightest concurrency limit (unbounded without one). */
  readonly batchSize: number;
  /** Gate policies of the pool and the fleet: every one must pass for a start. */
  readonly gates: readonly PolicyOf<'gate'>[];
  /** The pool's `onHold`: whether a held machine keeps its rollout open (`wait`) or is skipped. */
  readonly onHold: 'wait' | 'skip';
}

/** A limit in machines: a count, or ceil(percent × size), at least 1. */
export function limitOf(policy: PolicyOf<'concurrency'>, size: number): ConcurrencyRule['limit'] {
  if ('count' in policy.limit) return policy.limit.count;
  // The epsilon keeps 25% of 12 at 3 when the float product is 3.0000000000000004.
  return Math.max(1, Math.ceil((policy.limit.percent * size) / 100 - 1e-9));
}

function concurrencyRule(
  policy: PolicyOf<'concurrency'>,
  scope: string,
  size: number,
): ConcurrencyRule {
  const limit = limitOf(policy, size);
  const describe =
    'count' in policy.limit ? String(limit) : `${limit} = ${policy.limit.percent}% of ${size}`;
  return { scope, limit, describe };
}

function rateRule(
  policy: PolicyOf<'rate'>,
  scope: string,
  starts: readonly StartRecord[],
  now: number,
): RateRule {
  const from = now - policy.periodMs;
  const times = starts
    .filter((s) => s.at > from && s.at <= now)
    .map((s) => s.at)
    .sort((a, b) => a - b);
  return { scope, count: policy.count, periodMs: policy.periodMs, times, admitted: 0 };
}

/** What a scope (pool or fleet) contributes: its limit rules, built against its own size. */
export interface ScopeInput {
  readonly scope: string;
  readonly policies: readonly Policy[];
  readonly size: number;
  readonly starts: readonly StartRecord[];
}

export interface ScopeRules {
  readonly input: ScopeInput;
  readonly windows: readonly WindowRule[];
  readonly rates: readonly RateRule[];
  readonly concurrency: readonly ConcurrencyRule[];
}

export function scopeRules(input: ScopeInput, now: number): ScopeRules {
  const { scope, policies, size, starts } = input;
  return {
    input,
    windows: ofKind(policies, 'window'),
    rates: ofKind(policies, 'rate').map((p) => rateRule(p, scope, starts, now)),
    concurrency: ofKind(policies, 'concurrency').map((p) => concurrencyRule(p, scope, size)),
  };
}

function firstOf<K extends PolicyKind>(
  pool: readonly Policy[],
  fleet: readonly Policy[],
  kind: K,
): PolicyOf<K> | undefined {
  return ofKind(pool, kind)[0] ?? ofKind(fleet, kind)[0];
}

/** Combines a pool's scope rules with the fleet's (fleet rule objects are shared, not copied). */
export function poolRules(
  pool: ScopeRules,
  fleet: ScopeRules,
  onHold: PoolRules['onHold'] = 'wait',
): PoolRules {
  const own = pool.input.policies;
  const all = fleet.input.policies;
  const concurrency = [...pool.concurrency, ...fleet.concurrency];
  return {
    windows: [...pool.windows, ...fleet.windows],
    rates: [...pool.rates, ...fleet.rates],
    concurrency,
    canary: firstOf(own, all, 'canary'),
    batches: firstOf(own, all, 'batches'),
    zones: firstOf(own, all, 'zones'),
    machineSoakMs: firstOf(own, all, 'machine-soak')?.soakMs ?? 0,
    controlPlaneFirst: firstOf(own, all, 'control-plane-first') !== undefined,
    maxFailed: firstOf(own, all, 'failure-budget')?.maxFailed ?? 1,
    batchSize: Math.min(Infinity, ...concurrency.map((c) => c.limit)),
    gates: [...ofKind(own, 'gate'), ...ofKind(all, 'gate')],
    onHold,
  };
}

/** The pool's policies, or none for a pool the snapshot does not declare. */
export const policiesOf = (pools: ReadonlyMap<string, Pool>, name: string): readonly Policy[] =>
  pools.get(name)?.policies ?? [];
