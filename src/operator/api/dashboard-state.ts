// SPDX-License-Identifier: Apache-2.0
/**
 * Everything one refresh of the dashboard draws, as one answer (`GET /v1/dashboard`) and as the
 * data embedded in the page it serves (so the first paint has it): the machines, the rollouts in
 * full, the plan, the pools and the blocked releases — each built by the same view functions as the API's own routes.
 *
 * Only the rollouts a person looks at are sent in full: every unfinished one and the latest
 * {@link recentEnded} finished ones. Older ones stay a click away (`GET /v1/rollouts/:id`). A
 * reader who has not signed in gets it through `anonymous-view.ts`.
 */
import { isEnded } from '../../core/rollout/vocabulary.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import { policyText, poolFollows, poolRuleTexts } from '../../core/rollout/policy-text.ts';
import type { DashboardStateView, PoolView, SessionView } from '../../protocol/dashboard.ts';
import type { StoredState } from '../ports/store.ts';
import { anonymousRedactor, anonymousView } from './anonymous-view.ts';
import type { OperatorApiDeps } from './context.ts';
import { dashboardMachineView, machineFacts } from './machine-views.ts';
import { planView } from './routes-plan.ts';
import { blockView } from './routes-releases.ts';
import { contextOf } from './routes-rollouts.ts';
import { rolloutView } from './views.ts';

/** Finished rollouts sent in full, the latest first. */
export const recentEnded = 20;

const byCreation = (x: Rollout, y: Rollout): number =>
  x.createdAt - y.createdAt || (x.id < y.id ? -1 : 1);

/** The rollouts the page shows, oldest first: unfinished ones and the latest finished ones. */
export function shownRollouts(rollouts: readonly Rollout[]): Rollout[] {
  const sorted = rollouts.toSorted(byCreation);
  const ended = sorted.filter((r) => isEnded(r.state));
  const keep = new Set(ended.slice(-recentEnded));
  return sorted.filter((r) => !isEnded(r.state) || keep.has(r));
}

/** The fleet's pools as the page shows them. */
function poolViews(deps: OperatorApiDeps, stored: StoredState): PoolView[] {
  return deps.fleet.pools.map((p) => {
    const follows = poolFollows(p);
    return {
      name: p.name,
      ...(follows !== undefined && { follows }),
      rules: [...p.policies.map(policyText), ...poolRuleTexts(p)],
      machines: stored.machines.filter((m) => m.pool === p.name).length,
    };
  });
}

/** The page's state for `session` (what it may see follows from it). */
export async function dashboardState(
  deps: OperatorApiDeps,
  session: SessionView,
): Promise<DashboardStateView> {
  const [stored, plan] = await Promise.all([deps.store.read(), planView(deps, { releases: true })]);
  const now = deps.now();
  const shown = { fleet: deps.fleet, signedIn: session.user !== undefined };
  const ctx = contextOf(deps, stored);
  const state: DashboardStateView = {
    session,
    machines: stored.machines.map((m) =>
      dashboardMachineView(m, machineFacts(stored, deps.observations, { id: m.id, now }), shown),
    ),
    rollouts: shownRollouts(stored.rollouts).map((r) => rolloutView(r, ctx)),
    plan,
    pools: poolViews(deps, stored),
    blocks: shown.signedIn ? stored.blocks.map(blockView) : [],
  };
  return shown.signedIn ? state : anonymousView(state, anonymousRedactor(stored));
}
