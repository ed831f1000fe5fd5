// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's wire contract (docs/adr/0005 §5): routes, request bodies, the views it answers
 * with, who may call what, and the history event stream. Same rules as the agent's contract
 * (`agent.ts`): field names are public (add, never rename), bodies and queries are `.strict()`
 * (an unknown field is `MOLT_BAD_INPUT`, never ignored), errors are {@link ErrorBody}, times on the
 * wire are ISO 8601 strings.
 */
import { z } from 'zod';
import {
  HistoryKinds,
  MachinePhases,
  RolloutStates,
  type MachinePhase,
} from '../core/rollout/vocabulary.ts';
import { ImageRolloutView } from './operator-images.ts';
import { DecisionView, queryFlag } from './operator-plan.ts';

export { isEnded } from '../core/rollout/vocabulary.ts';

export * from './operator-machines.ts';
export * from './operator-blocks.ts';
export * from './operator-kubernetes.ts';
export * from './operator-images.ts';
export * from './operator-plan.ts';

export const OperatorRoutes = {
  rollouts: '/v1/rollouts',
  rollout: '/v1/rollouts/:id',
  pause: '/v1/rollouts/:id/pause',
  resume: '/v1/rollouts/:id/resume',
  approve: '/v1/rollouts/:id/approve',
  cancel: '/v1/rollouts/:id/cancel',
  rollback: '/v1/rollouts/:id/rollback',
  machines: '/v1/machines',
  /** `DELETE`: deregister a machine that registered through the API. */
  machine: '/v1/machines/:id',
  hold: '/v1/machines/:id/hold',
  release: '/v1/machines/:id/release',
  history: '/v1/history',
  events: '/v1/events',
  plan: '/v1/plan',
  /** `GET`: the blocked releases. */
  blocks: '/v1/releases/blocks',
  block: '/v1/releases/block',
  unblock: '/v1/releases/unblock',
  metrics: '/metrics',
  /** Zincati's `base_url` (FleetLock's own protocol and error bodies, not molt's). */
  fleetLock: '/fleetlock',
} as const;

/** A route with its `:id` filled in (URI-encoded). */
export const operatorPath = (route: string, id: string): string =>
  route.replace(':id', encodeURIComponent(id));

export const RolloutStateSchema = z.enum(RolloutStates);
export const MachinePhaseSchema = z.enum(MachinePhases);

/** One machine of a rollout: its recorded progress, and the planner's current decision. */
export const MachineProgressView = z.object({
  machine: z.string(),
  phase: MachinePhaseSchema,
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  reason: z.string().optional(),
  operationId: z.string().optional(),
  decision: DecisionView.optional(),
  /** Not started, and holding the rollout's release staged (docs/adr/0019): its start only reboots. */
  staged: z.boolean().optional(),
});
export type MachineProgressView = z.infer<typeof MachineProgressView>;

const count = z.number().int();
const phaseCounts = Object.fromEntries(MachinePhases.map((p) => [p, count])) as Record<
  MachinePhase,
  typeof count
>;

/**
 * Machines of the rollout's pool per phase (every phase present; `Skipped` are the machines set
 * aside by `quarantine-and-skip`: finished, not failures), and the total.
 */
export const RolloutCounts = z.object({
  total: count,
  ...phaseCounts,
  /** Pending machines the planner skips (already on the target, pinned); known only once observed. */
  skipped: count,
});
export type RolloutCounts = z.infer<typeof RolloutCounts>;

/** Counts of `total` machines with none in any phase yet (`over` sets some). */
export const emptyCounts = (total: number, over: Partial<RolloutCounts> = {}): RolloutCounts => ({
  total,
  ...(Object.fromEntries(MachinePhases.map((p) => [p, 0])) as Record<MachinePhase, number>),
  skipped: 0,
  ...over,
});

/** A rollout as `GET /v1/rollouts` lists it. */
export const RolloutSummaryView = z.object({
  id: z.string(),
  pool: z.string(),
  target: z.object({ version: z.string(), digest: z.string() }),
  /** What the pool ran before (a rollback's target). */
  from: z.object({ version: z.string(), digest: z.string() }).optional(),
  /** The versions of the whole multi-hop path when the target is one step of it. */
  path: z.array(z.string()).optional(),
  /** The completed rollout whose drifted machines this one brings back to the pool's release. */
  repairOf: z.string().optional(),
  /** Why it ended when it did not complete (RolledBack, Superseded, Cancelled). */
  endReason: z.string().optional(),
  /** Why it waits for a person while Paused or Halted: who paused it and why, what halted it. */
  stateReason: z.string().optional(),
  state: RolloutStateSchema,
  createdAt: z.string(),
  counts: RolloutCounts,
  /** The rollout this one reverses (a fleet rollback). */
  rollbackOf: z.string().optional(),
  /** An image rollout's record (docs/adr/0013): its machines are workloads. Absent: machines. */
  images: ImageRolloutView.optional(),
});
export type RolloutSummaryView = z.infer<typeof RolloutSummaryView>;

/** A rollout with every machine of its pool (`GET /v1/rollouts/:id`). */
export const RolloutView = RolloutSummaryView.extend({ machines: z.array(MachineProgressView) });
export type RolloutView = z.infer<typeof RolloutView>;

/** Answer of pause / resume / approve: the rollout after the request; `changed` false when it already was so. */
export const RolloutActionResult = z.object({ rollout: RolloutView, changed: z.boolean() });
export type RolloutActionResult = z.infer<typeof RolloutActionResult>;

/** A person's reason for an action on a rollout, for the history. */
const reason = z.string().min(1).max(500).optional();
/** `POST /v1/rollouts/:id/pause`. */
export const PauseRequestBody = z.strictObject({ reason });
/**
 * `POST /v1/rollouts/:id/resume`. Resuming a `Halted` rollout needs an admin and `force: true`: it
 * retries the failed and rolled-back machines (their progress goes back to Pending), which is the
 * only way its spent failure budget can be spent again.
 */
export const ResumeRequestBody = z.strictObject({ force: z.boolean().default(false), reason });
/** `POST /v1/rollouts/:id/approve`. */
export const ApproveRequestBody = z.strictObject({ reason });
/**
 * `POST /v1/rollouts/:id/cancel`: end a rollout that has not (AwaitingApproval, Active, Paused,
 * Halted) — final; machines in flight finish, none start, and its release is not offered to the
 * pool again.
 */
export const RolloutCancelRequestBody = z.strictObject({ reason });
/**
 * `POST /v1/rollouts/:id/rollback`: a coordinated fleet rollback — a new rollout of the same pool
 * back to the release it ran before (`<id>-rollback`, under the same policies); the answer is that
 * new rollout. The original must be paused, halted or completed first. Asking again answers the
 * existing rollback with `changed: false`.
 */
export const FleetRollbackRequestBody = z.strictObject({
  reason: z.string().min(1).max(500).optional(),
});

export const HistoryKind = z.enum(HistoryKinds);

/** One line of the operator's history; SSE frames carry it as `id: <seq>`, `event: <kind>`. */
export const HistoryEventView = z.object({
  seq: z.number().int().positive(),
  at: z.string(),
  kind: HistoryKind,
  rollout: z.string().optional(),
  machine: z.string().optional(),
  message: z.string(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type HistoryEventView = z.infer<typeof HistoryEventView>;

const seq = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * Query of `GET /v1/history`: events after `after` (seq), oldest first, at most `limit`; only those
 * of `rollout` and/or `machine` when given.
 */
export const HistoryQuery = z.strictObject({
  after: seq.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  rollout: z.string().min(1).max(200).optional(),
  machine: z.string().min(1).max(200).optional(),
});

/** Query of `GET /v1/events` (filters as {@link HistoryQuery}); `Last-Event-ID: <seq>` overrides `after`. */
export const EventsQuery = z.strictObject({
  after: seq.optional(),
  follow: queryFlag.optional(),
  rollout: z.string().min(1).max(200).optional(),
  machine: z.string().min(1).max(200).optional(),
});

/**
 * What each role may do on the operator: reads are open to the whole fleet. `register-self` lets
 * a node register only itself, and only as the operator config's `selfRegistration` rules allow
 * (the route checks both, and that the agent at the endpoint presents the node's certificate).
 */
export type OperatorPermission = 'read' | 'register-self' | 'write' | 'force';
export const OperatorRolePermissions: Readonly<
  Record<'node' | 'operator' | 'admin', readonly OperatorPermission[]>
> = {
  node: ['read', 'register-self'],
  operator: ['read', 'write'],
  admin: ['read', 'write', 'force'],
};

/** The line `molt operator` prints once its API listens (tests and demos find the port in it). */
export const OperatorServingPrefix = 'molt operator: serving ';
/** What `molt operator` prints when its FleetLock listener (config `fleetLock`) is up. */
export const OperatorFleetLockPrefix = 'molt operator: FleetLock at ';
/** What `molt operator` prints when its dashboard (config `dashboard`) is up. */
export const OperatorDashboardPrefix = 'molt operator: dashboard at ';
/** What `molt operator` prints when its probe listener (config `health`) is up. */
export const OperatorHealthPrefix = 'molt operator: probes at ';
/** The line `molt operator` prints once its Cluster API extension listens (docs/adr/0014). */
export const OperatorCapiPrefix = 'molt operator: Cluster API extension at ';
