// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/plan` (core's `plan`, and with `?explain` core's `explain`, on the stored state and the
 * loop's last observations) and `GET /metrics` (Prometheus text).
 */
import type { FastifyInstance } from 'fastify';
import type { Refusal } from '../../core/rollout/index.ts';
import type { FleetSnapshot, MachineDecision, Policy } from '../../core/rollout/types.ts';
import { windowStretches } from '../../core/rollout/window-stretches.ts';
import type { FleetPolicies } from '../decide/snapshot.ts';
import {
  OperatorRoutes,
  PlanQuery,
  type PlanDecisionView,
  type PlanView,
} from '../../protocol/operator.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import { parseInput } from '../../platform/https/input.ts';
import { metricsContentType, renderMetrics } from './metrics.ts';
import { readFleetLockSlots } from './metrics-fleet.ts';
import { planNow, refusalsNow, snapshotOf, stagedNow } from './snapshot.ts';
import { iso } from '../../core/time.ts';
import { decisionKey, decisionView } from './views.ts';
import { poolReleases } from '../decide/pool-releases.ts';
import type { StoredState } from '../ports/store.ts';
import { withReleasesEvery } from './read-every.ts';

function decisionWith(
  d: MachineDecision,
  refusals: readonly Refusal[] | undefined,
  staged: boolean,
): PlanDecisionView {
  return {
    rollout: d.rollout,
    machine: d.machine,
    ...decisionView(d),
    ...(staged && { staged }),
    ...(refusals !== undefined && {
      refusals: refusals.map((r) => ({
        code: r.code,
        message: r.message,
        ...(r.notBefore !== undefined && { notBefore: iso(r.notBefore) }),
      })),
    }),
  };
}

const DAY_MS = 24 * 3_600_000;

/** Each pool's allowed stretches from a day before `now` to a day after (pools with windows only). */
export function poolWindows(fleet: FleetPolicies, now: number): PlanView['windows'] {
  const fleetWide = fleet.fleetPolicies.filter(isWindow);
  return fleet.pools.flatMap((p) => {
    const stretches = windowStretches(
      [...p.policies.filter(isWindow), ...fleetWide],
      now - DAY_MS,
      now + DAY_MS,
    );
    return stretches === undefined
      ? []
      : [{ pool: p.name, open: stretches.map((s) => ({ from: iso(s.from), to: iso(s.to) })) }];
  });
}

const isWindow = (p: Policy): p is Extract<Policy, { kind: 'window' }> => p.kind === 'window';

export function planRoutes(app: FastifyInstance, c: RouteContext): void {
  planRoute(app, c.deps, { releases: true });
  metricsRoute(app, c.deps);
}

/**
 * Each pool's next release and what it passes over (`releases`), on the registry's releases now;
 * undefined when the registry cannot be read (the plan itself never waits on it).
 */
async function releasesNow(
  deps: OperatorApiDeps,
  stored: StoredState,
  snapshot: FleetSnapshot,
): Promise<PlanView['releases']> {
  if (deps.releases === undefined) return undefined;
  try {
    const [releases, kubernetes] = await Promise.all([deps.releases(), deps.kubernetesVersion?.()]);
    return poolReleases({
      pools: deps.fleet.pools,
      releases,
      rollouts: stored.rollouts,
      machines: snapshot.machines,
      blocks: stored.blocks,
      now: deps.now(),
      ...(kubernetes !== undefined && { kubernetes }),
    });
  } catch {
    return undefined;
  }
}

/** What {@link planView} adds to the plan. */
export interface PlanViewOptions {
  /** Every refusing check of each waiting machine. */
  readonly explain?: boolean | undefined;
  /** Where each pool goes next (the registry's releases; names who blocked what). */
  readonly releases?: boolean | undefined;
}

/** The plan now, as `GET /v1/plan` answers it (also the dashboard's state, `dashboard-state.ts`). */
export async function planView(deps: OperatorApiDeps, o: PlanViewOptions = {}): Promise<PlanView> {
  const stored = await deps.store.read();
  const now = deps.now();
  const snapshot = snapshotOf(stored, deps.observations, deps.fleet);
  const { plan } = planNow(snapshot, now);
  const refusals = o.explain === true ? refusalsNow(snapshot, now) : undefined;
  const pools = o.releases === true ? await releasesNow(deps, stored, snapshot) : undefined;
  const staged = stagedNow(stored.rollouts, deps.observations);
  const seen = stored.machines.flatMap((m) => {
    const o = deps.observations.get(m.id);
    return o === undefined ? [] : [o.at];
  });
  return {
    at: iso(plan.at),
    leader: deps.isLeader(),
    observed: {
      machines: seen.length,
      of: stored.machines.length,
      ...(seen.length > 0 && { oldest: iso(Math.min(...seen)) }),
    },
    decisions: plan.decisions.map((d) => {
      const key = decisionKey(d.rollout, d.machine);
      return decisionWith(d, refusals?.get(key), staged.has(key));
    }),
    windows: poolWindows(deps.fleet, now),
    rollouts: plan.rollouts.map((v) => ({
      rollout: v.rollout,
      verdict: v.verdict,
      ...(v.message !== undefined && { message: v.message }),
    })),
    ...(pools !== undefined && { releases: pools }),
  };
}

/**
 * `GET /v1/plan` (the API's and the dashboard's; only the API's says where pools go next and
 * why not elsewhere, since that names who blocked a release and why).
 */
export function planRoute(
  app: FastifyInstance,
  deps: OperatorApiDeps,
  o: { readonly releases?: boolean } = {},
): void {
  const reads = withReleasesEvery(deps);
  app.get(OperatorRoutes.plan, async (request): Promise<PlanView> => {
    const q = parseInput(PlanQuery, request.query, 'plan query');
    return planView(reads, { explain: q.explain, releases: o.releases });
  });
}

/** `GET /metrics`: the API's only (the dashboard's listener is no place for it). */
function metricsRoute(app: FastifyInstance, deps: OperatorApiDeps): void {
  app.get(OperatorRoutes.metrics, async (_request, reply) => {
    const pools = deps.fleet.pools.map((p) => p.name);
    const { groups, store } = deps.fleetLock;
    const text = renderMetrics({
      state: await deps.store.read(),
      metrics: deps.metrics,
      pools,
      leader: deps.isLeader(),
      now: deps.now(),
      observations: deps.observations,
      fleetLock: await readFleetLockSlots(pools, groups, store),
      gm: deps.images?.gm?.findings(),
    });
    return reply.type(metricsContentType).send(text);
  });
}
