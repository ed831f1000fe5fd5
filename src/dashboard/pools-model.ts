// SPDX-License-Identifier: Apache-2.0
/**
 * The releases and pools page as plain values (no DOM): each pool with what it follows, runs and
 * takes next, its rules, and the newer releases it passes over and why — a release rolled back
 * for it marked so, with the block to lift; and every blocked release. The actions' requests are
 * the operator API's own (`POST /v1/releases/{block,unblock}`), which checks everything again.
 */
import type { BlockView } from '../protocol/operator-blocks.ts';
import type { DashboardStateView } from '../protocol/dashboard.ts';
import type { PoolReleasesView } from '../protocol/operator.ts';

/** How a release stands for a pool, as the page marks it. */
export type ReleaseMark = 'rolled back' | 'blocked' | 'passed over';

/** A newer release a pool does not take. */
export interface PassedOver {
  readonly version: string;
  readonly digest: string;
  readonly mark: ReleaseMark;
  /** The operator's reason, with its code: `Blocked: rolled back by r-2 …`. */
  readonly reason: string;
  /** The block that keeps it out, when lifting it offers the release again. */
  readonly block?: BlockView;
}

export interface PoolRow {
  readonly name: string;
  readonly follows: string | undefined;
  readonly machines: number;
  readonly rules: readonly string[];
  /** The releases its machines boot, with how many: `1.1.0 ×3`, newest first; `–`: none seen. */
  readonly runs: string;
  readonly next: PoolReleasesView['next'];
  /** Why nothing is next, when nothing is. */
  readonly none: string | undefined;
  readonly passedOver: readonly PassedOver[];
}

/** The block that keeps `digest` from `pool`: the pool's own, or the every-pool one. */
const blockFor = (
  blocks: readonly BlockView[],
  digest: string,
  pool: string,
): BlockView | undefined =>
  blocks.find((b) => b.digest === digest && b.pool === pool) ??
  blocks.find((b) => b.digest === digest && b.pool === undefined);

/** A block a rollback made: its rollout was rolled back (or rolls the pool back). */
export function markOf(
  b: BlockView | undefined,
  s: Pick<DashboardStateView, 'rollouts'>,
): ReleaseMark {
  if (b === undefined) return 'passed over';
  const r = b.rollout === undefined ? undefined : s.rollouts.find((x) => x.id === b.rollout);
  const rolledBack = r?.state === 'RolledBack' || /\brolled back\b/i.test(b.reason);
  return rolledBack ? 'rolled back' : 'blocked';
}

/** The releases `pool`'s machines boot, newest first, with how many boot each. */
export function runsOf(pool: string, s: Pick<DashboardStateView, 'machines'>): string {
  const counts = new Map<string, number>();
  for (const m of s.machines)
    if (m.pool === pool && m.observed?.version !== undefined)
      counts.set(m.observed.version, (counts.get(m.observed.version) ?? 0) + 1);
  const newest = [...counts].sort(([a], [b]) => b.localeCompare(a, 'en', { numeric: true }));
  return newest.length === 0 ? '–' : newest.map(([v, n]) => `${v} ×${String(n)}`).join(', ');
}

/** The pools, in the fleet's order, with the plan's view of their releases. */
export function poolRows(s: DashboardStateView): PoolRow[] {
  const plans = new Map((s.plan.releases ?? []).map((r) => [r.pool, r]));
  return s.pools.map((p) => {
    const plan = plans.get(p.name);
    return {
      name: p.name,
      follows: p.follows,
      machines: p.machines,
      rules: p.rules,
      runs: runsOf(p.name, s),
      next: plan?.next,
      none:
        s.plan.releases === undefined ? 'not known now: the registry did not answer' : plan?.none,
      passedOver: (plan?.notTaken ?? []).map((n) => {
        const block = n.code === 'Blocked' ? blockFor(s.blocks, n.digest, p.name) : undefined;
        return {
          version: n.version,
          digest: n.digest,
          mark: n.code === 'Blocked' ? markOf(block, s) : 'passed over',
          reason: `${n.code}: ${n.reason}`,
          ...(block !== undefined && { block }),
        };
      }),
    };
  });
}

/** An action's request: the operator API's path and body. */
export interface ReleaseRequest {
  readonly path: string;
  readonly body: Readonly<Record<string, string>>;
}

/** Lift `b` (by digest: a version may name two). */
export const unblockRequest = (b: BlockView): ReleaseRequest => ({
  path: '/v1/releases/unblock',
  body: { release: b.digest, ...(b.pool !== undefined && { pool: b.pool }) },
});

/** Block `digest` for `pool`, saying why. */
export const blockRequest = (digest: string, pool: string, reason: string): ReleaseRequest => ({
  path: '/v1/releases/block',
  body: { release: digest, pool, reason },
});

/** A block's release as people name it: its version, or its digest shortened. */
export const releaseName = (b: Pick<BlockView, 'version' | 'digest'>): string =>
  b.version ?? `${b.digest.slice(0, 19)}…`;
