// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/rollouts`, `GET /v1/rollouts/:id` and `POST /v1/rollouts/:id/{rollback,pause,resume,
 * approve,cancel}`: parsed, authorised and answered here; what an action may do and how it is
 * written is `../actions/`.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { requirePermission } from '../../platform/https/identity.ts';
import { parseInput } from '../../platform/https/input.ts';
import {
  ApproveRequestBody,
  RolloutCancelRequestBody,
  OperatorRolePermissions,
  OperatorRoutes,
  PauseRequestBody,
  ResumeRequestBody,
  FleetRollbackRequestBody,
  type RolloutActionResult,
  type RolloutView,
} from '../../protocol/operator.ts';
import { findRollout, rollbackOn, type RollbackRequest } from '../actions/rollback.ts';
import { actOn, type ActionRequest } from '../actions/rollout-action.ts';
import type { RolloutAction } from '../actions/rollout-rules.ts';
import type { StoredState } from '../ports/store.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import { planNow, snapshotOf, stagedNow } from './snapshot.ts';
import { imageDecisions } from './image-plan.ts';
import { rolloutView, summaryView, type RolloutContext } from './views.ts';

const Params = (request: { params: unknown }): string => {
  const id = (request.params as { id?: unknown }).id;
  if (typeof id !== 'string' || id === '' || id.length > 200)
    throw new MoltError(ErrorCode.BadInput, 'invalid rollout id');
  return id;
};

/**
 * What rollout views need: the machines and the plan now (the decisions each machine shows), and
 * the image driver's last plan (the decisions each workload of an image rollout shows).
 */
export function contextOf(deps: OperatorApiDeps, stored: StoredState): RolloutContext {
  const now = deps.now();
  const snapshot = snapshotOf(stored, deps.observations, deps.fleet);
  const { index } = planNow(snapshot, now);
  const images = imageDecisions(deps.images?.lastPlan?.last());
  const units = new Set([...images.values()].map((d) => d.machine));
  return {
    machines: stored.machines,
    decisions: new Map([...index, ...images]),
    observed: (m) => deps.observations.get(m) !== undefined || units.has(m),
    holds: new Map(snapshot.machines.map((m) => [m.id, m.hold])),
    staged: stagedNow(stored.rollouts, deps.observations),
    now,
  };
}

async function viewOf(deps: OperatorApiDeps, id: string): Promise<RolloutView> {
  const stored = await deps.store.read();
  return rolloutView(findRollout(stored, id), contextOf(deps, stored));
}

async function act(deps: OperatorApiDeps, a: ActionRequest): Promise<RolloutActionResult> {
  const changed = await actOn(deps, a);
  return { rollout: await viewOf(deps, a.id), changed };
}

const actionBodies = {
  pause: PauseRequestBody,
  resume: ResumeRequestBody,
  approve: ApproveRequestBody,
  cancel: RolloutCancelRequestBody,
} as const;

function parseAction(action: RolloutAction, body: unknown): { force: boolean; reason?: string } {
  const b: { force?: boolean; reason?: string | undefined } = parseInput(
    actionBodies[action],
    body,
    `${action} request`,
  );
  return { force: b.force ?? false, ...(b.reason !== undefined && { reason: b.reason }) };
}

async function rollback(deps: OperatorApiDeps, a: RollbackRequest): Promise<RolloutActionResult> {
  const { id, changed } = await rollbackOn(deps, a);
  return { rollout: await viewOf(deps, id), changed };
}

/** `GET /v1/rollouts` and `GET /v1/rollouts/:id` (the API's and the dashboard's). */
export function rolloutReadRoutes(app: FastifyInstance, deps: OperatorApiDeps): void {
  app.get(OperatorRoutes.rollouts, async () => {
    const stored = await deps.store.read();
    const ctx = contextOf(deps, stored);
    return stored.rollouts
      .toSorted((x, y) => x.createdAt - y.createdAt || (x.id < y.id ? -1 : 1))
      .map((r) => summaryView(r, ctx));
  });
  app.get(OperatorRoutes.rollout, async (request) => viewOf(deps, Params(request)));
}

/** The API's rollout routes: the reads and the actions. */
export function rolloutRoutes(app: FastifyInstance, c: RouteContext): void {
  rolloutReadRoutes(app, c.deps);
  rolloutActionRoutes(app, c);
}

/**
 * `POST /v1/rollouts/:id/{rollback,pause,resume,approve,cancel}`, for whoever `c.who` names — a
 * certificate on the API, a signed-in person on the dashboard: the same rules either way.
 */
export function rolloutActionRoutes(app: FastifyInstance, c: RouteContext): void {
  const { deps } = c;
  app.post(OperatorRoutes.rollback, async (request) => {
    const b = parseInput(FleetRollbackRequestBody, request.body ?? {}, 'rollback request');
    return rollback(deps, { id: Params(request), who: c.who(request), reason: b.reason });
  });
  for (const action of ['pause', 'resume', 'approve', 'cancel'] as const) {
    app.post(OperatorRoutes[action], async (request) => {
      const id = Params(request);
      const who = c.who(request);
      const body = parseAction(action, request.body ?? {});
      if (body.force)
        requirePermission(
          who,
          'force',
          `${action} rollout ${id} with force`,
          OperatorRolePermissions,
        );
      return act(deps, { id, action, who, ...body });
    });
  }
}
