// SPDX-License-Identifier: Apache-2.0
/**
 * `GET /v1/rollouts`, `GET /v1/rollouts/:id` and `POST /v1/rollouts/:id/{pause,resume,approve,cancel}`.
 * State rules: `rollout-actions.ts`. A change is one compare-and-set on the rollout (re-checked on
 * conflict, so a pass of the loop writing a verdict meanwhile is never overwritten blindly), then a
 * `rollout-state` history event naming who asked.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import { requirePermission, type Identity } from '../../platform/https/identity.ts';
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
import type { OperatorStore, ReleaseBlock, StoredState } from '../ports/store.ts';
import {
  recordTransition,
  type TransitionRecord,
  type TransitionSink,
} from '../transitions/record.ts';
import { findRollout, rollbackOn, type RollbackRequest } from './rollback-on.ts';
import type { OperatorApiDeps, RouteContext } from './context.ts';
import { applyRolloutAction, type ActionOutcome, type RolloutAction } from './rollout-actions.ts';
import { planNow, snapshotOf } from './snapshot.ts';
import { imageDecisions } from './image-plan.ts';
import { rolloutView, summaryView, type RolloutContext } from './views.ts';
import { blockedBy } from '../../core/quoted-reasons.ts';

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
    now,
  };
}

async function viewOf(deps: OperatorApiDeps, id: string): Promise<RolloutView> {
  const stored = await deps.store.read();
  return rolloutView(findRollout(stored, id), contextOf(deps, stored));
}

const verb = {
  pause: 'paused',
  resume: 'resumed',
  approve: 'approved',
  cancel: 'cancelled',
} as const;

export interface ActionRequest {
  readonly id: string;
  readonly action: RolloutAction;
  readonly who: Identity;
  readonly force: boolean;
  readonly reason?: string | undefined;
}

/** What an action changed: the state it left, and the machines a forced resume put back. */
interface ActionChange {
  readonly from: string;
  readonly reset: readonly string[];
}

/**
 * The action as one compare-and-set; undefined when the rollout already is so (nothing written:
 * the check runs first on the value read, and again inside the compare-and-set).
 */
async function writeAction(
  store: OperatorStore,
  current: Rollout,
  a: ActionRequest,
): Promise<ActionChange | undefined> {
  const why = a.reason === undefined ? '' : `: ${a.reason}`;
  const o = {
    force: a.force,
    endReason: `cancelled by ${a.who.name}${why}`,
    pauseReason: `paused by ${a.who.name}${why}`,
  };
  let outcome: ActionOutcome = applyRolloutAction(current, a.action, o);
  let from = current.state;
  if (outcome.changed)
    await store.updateRollout(a.id, (stored) => {
      from = stored.state;
      outcome = applyRolloutAction(stored, a.action, o);
      return outcome.next;
    });
  return outcome.changed ? { from, reset: outcome.reset } : undefined;
}

/**
 * A rollout whose release is blocked for its pool is not resumed or approved: the next scan would
 * pause it again. The block a Halted rollout's own halt made is the exception: a forced resume
 * (an admin decided to retry it) lifts it. Returns the blocks to lift once the action is written.
 */
function checkBlocked(stored: StoredState, a: ActionRequest): ReleaseBlock[] {
  if (a.action !== 'resume' && a.action !== 'approve') return [];
  const r = findRollout(stored, a.id);
  const blocks = stored.blocks.filter(
    (b) => b.digest === r.target.digest && (b.pool === undefined || b.pool === r.pool),
  );
  const own = (b: ReleaseBlock): boolean => r.state === 'Halted' && b.rollout === r.id;
  const other = blocks.find((b) => !own(b));
  if (other !== undefined)
    throw new MoltError(
      ErrorCode.RolloutState,
      `release ${r.target.version} is ${blockedBy(other.by, other.reason, other.pool === undefined ? 'every pool' : `pool ${other.pool}`)}`,
      {
        hint: `lift it first: molt releases unblock ${r.target.digest}${other.pool === undefined ? '' : ` --pool ${other.pool}`}`,
      },
    );
  return a.force ? blocks : [];
}

/** Lift the blocks a forced resume of a Halted rollout made moot, each recorded. */
async function liftOwn(deps: TransitionSink, a: ActionRequest, blocks: readonly ReleaseBlock[]) {
  for (const b of blocks)
    await recordTransition(deps, {
      write: (store) => store.removeBlock(b.digest, b.pool),
      record: {
        event: {
          kind: 'decision',
          rollout: a.id,
          message: `release ${b.version ?? b.digest} unblocked for pool ${b.pool ?? '(all)'}: ${a.id} resumed with force by ${a.who.name}`,
          data: { action: 'unblock', by: a.who.name, digest: b.digest, pool: b.pool },
        },
      },
    });
}

/**
 * A person's action on a rollout, checked, written and recorded — the API's, the dashboard's and a
 * declared `Rollout` spec's (loop/declared.ts) alike. True when it changed the rollout.
 */
export async function actOn(sink: TransitionSink, a: ActionRequest): Promise<boolean> {
  const stored = await sink.store.read();
  const current = findRollout(stored, a.id);
  const lift = checkBlocked(stored, a);
  const changed = await recordTransition(sink, {
    write: (store) => writeAction(store, current, a),
    record: (change) => change && actionRecord(a, change),
  });
  if (changed) await liftOwn(sink, a, lift);
  return changed;
}

async function act(deps: OperatorApiDeps, a: ActionRequest): Promise<RolloutActionResult> {
  const changed = await actOn(deps, a);
  return { rollout: await viewOf(deps, a.id), changed };
}

function actionRecord(a: ActionRequest, o: ActionChange): TransitionRecord {
  const why = a.reason === undefined ? '' : `: ${a.reason}`;
  const retried = o.reset.length === 0 ? '' : `; retrying ${o.reset.join(', ')}`;
  const state = a.action === 'pause' ? 'Paused' : a.action === 'cancel' ? 'Cancelled' : 'Active';
  return {
    event: {
      kind: 'rollout-state',
      rollout: a.id,
      message: `rollout ${a.id} ${verb[a.action]} by ${a.who.name}${a.force ? ' (forced)' : ''}${why}${retried}`,
      data: {
        state,
        from: o.from,
        by: a.who.name,
        action: a.action,
        ...(o.reset.length > 0 && { reset: [...o.reset] }),
        ...(a.reason !== undefined && { reason: a.reason }),
      },
    },
  };
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
