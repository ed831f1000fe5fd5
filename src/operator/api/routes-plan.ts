// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/plan` (core's `plan`, and with `?explain` core's `explain`, on the stored state and the
 * loop's last observations) and `GET /metrics` (Prometheus text).
 */
import type { FastifyInstance } from 'fastify';
import type { Refusal } from '../../core/rollout/index.ts';
import type { MachineDecision } from '../../core/rollout/types.ts';
import {
  OperatorRoutes,
  PlanQuery,
  type PlanDecisionView,
  type PlanView,
} from '../../protocol/operator.ts';
import type { RouteContext } from './context.ts';
import { parseInput } from '../../platform/https/input.ts';
import { metricsContentType, renderMetrics } from './metrics.ts';
import { planNow, refusalsNow, snapshotOf } from './snapshot.ts';
import { decisionKey, decisionView, iso } from './views.ts';

function decisionWith(
  d: MachineDecision,
  refusals: readonly Refusal[] | undefined,
): PlanDecisionView {
  return {
    rollout: d.rollout,
    machine: d.machine,
    ...decisionView(d),
    ...(refusals !== undefined && {
      refusals: refusals.map((r) => ({
        code: r.code,
        message: r.message,
        ...(r.notBefore !== undefined && { notBefore: iso(r.notBefore) }),
      })),
    }),
  };
}

export function planRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.get(OperatorRoutes.plan, async (request): Promise<PlanView> => {
    const q = parseInput(PlanQuery, request.query, 'plan query');
    const stored = await deps.store.read();
    const now = deps.now();
    const snapshot = snapshotOf(stored, deps.observations, deps.fleet);
    const { plan } = planNow(snapshot, now);
    const refusals = q.explain === true ? refusalsNow(snapshot, now) : undefined;
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
      decisions: plan.decisions.map((d) =>
        decisionWith(d, refusals?.get(decisionKey(d.rollout, d.machine))),
      ),
      rollouts: plan.rollouts.map((v) => ({
        rollout: v.rollout,
        verdict: v.verdict,
        ...(v.message !== undefined && { message: v.message }),
      })),
    };
  });
  app.get(OperatorRoutes.metrics, async (_request, reply) => {
    const text = renderMetrics({
      state: await deps.store.read(),
      metrics: deps.metrics,
      pools: deps.fleet.pools.map((p) => p.name),
      leader: deps.isLeader(),
      now: deps.now(),
    });
    return reply.type(metricsContentType).send(text);
  });
}
