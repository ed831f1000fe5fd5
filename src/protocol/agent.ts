// SPDX-License-Identifier: Apache-2.0
/**
 * The node agent's wire contract (docs/adr/0004 §6): request bodies, status and event shapes,
 * who may call what, and the lab's exit codes. Field names are a public contract: add fields,
 * never rename them. Bodies are `.strict()`: an unknown field is an error, not ignored.
 */
import { z } from 'zod';
import { HoldView } from './agent-hold.ts';
import { Bootloaders } from '../core/boot/bootloaders.ts';
import { DrainTimeoutActions } from '../core/drain/pods.ts';
import { RequestDefaults } from '../core/upgrade/events.ts';

export const AgentRoutes = {
  status: '/v1/status',
  upgrade: '/v1/upgrade',
  rollback: '/v1/rollback',
  reboot: '/v1/reboot',
  /** Cancel the running pull (operator, admin): 202 {operationId}, or 409 MOLT_NOT_CANCELLABLE. */
  cancel: '/v1/cancel',
  /** The machine's hold (agent-hold.ts): GET reads it; POST sets it, DELETE clears it (operator, admin). */
  hold: '/v1/hold',
  operations: '/v1/operations',
  events: '/v1/events',
  logs: '/v1/logs',
} as const;

export const UpgradeRequestBody = z
  .object({
    image: z.string().min(1).max(1024),
    preserve: z.boolean().default(RequestDefaults.preserve),
    stage: z.boolean().default(RequestDefaults.stage),
    force: z.boolean().default(RequestDefaults.force),
    /**
     * Take this control-plane machine's etcd member down even when that leaves a 2-member cluster
     * without quorum (the operator sends it for a cluster with smallControlPlane: accept-downtime).
     * Narrower than `force`, which also overrides every other refusal and needs an admin.
     */
    acceptQuorumLoss: z.boolean().optional(),
    /** The rollout's drain policy, over the machine's own config (docs/adr/0006). */
    drain: z
      .object({
        timeoutSeconds: z.number().int().positive().optional(),
        onTimeout: z.enum(DrainTimeoutActions).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type UpgradeRequestBody = z.infer<typeof UpgradeRequestBody>;

export const RollbackRequestBody = z.object({ force: z.boolean().default(false) }).strict();
export type RollbackRequestBody = z.infer<typeof RollbackRequestBody>;

export const RebootRequestBody = z
  .object({
    force: z.boolean().default(false),
    /** As for an upgrade: a 2-member etcd's loss of quorum is accepted (applying a staged one). */
    acceptQuorumLoss: z.boolean().optional(),
    /**
     * Apply the staged upgrade with this operation id, and nothing else: refused with
     * `MOLT_NOT_STAGED` when it is not what waits (discarded meanwhile, or never staged), so a
     * caller that meant to apply never gets a plain reboot instead.
     */
    apply: z.string().min(1).max(128).optional(),
  })
  .strict();
export type RebootRequestBody = z.infer<typeof RebootRequestBody>;

/** `POST /v1/cancel`: `operation` cancels only that operation (else MOLT_NOT_CANCELLABLE). */
export const CancelRequestBody = z
  .object({ operation: z.string().min(1).max(128).optional() })
  .strict();
export type CancelRequestBody = z.infer<typeof CancelRequestBody>;

/** 202 answer to upgrade / rollback / reboot (and cancel: the operation being cancelled). */
export const OperationAccepted = z.object({ operationId: z.string() });
export type OperationAccepted = z.infer<typeof OperationAccepted>;

/** Every non-2xx answer. `details` carries e.g. the running operation for `MOLT_AGENT_BUSY`. */
export const ErrorBody = z.object({
  code: z.string(),
  message: z.string(),
  hint: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

const SlotIdSchema = z.enum(['A', 'B']);

export const SlotView = z.object({
  slot: SlotIdSchema,
  /**
   * `empty` when the slot holds no manifest; `staged` when a staged upgrade wrote and verified it
   * and waits to be applied (on disk still `writing`: no boot entry points at it).
   */
  status: z.enum(['ready', 'writing', 'staged', 'bad', 'empty']),
  version: z.string().nullable(),
  digest: z.string().nullable(),
  generation: z.number().int().nullable(),
  badReason: z.string().optional(),
});
export type SlotView = z.infer<typeof SlotView>;

export const BootEntryView = z.object({
  slot: SlotIdSchema,
  /** `committed` = the default; `trial` = armed for one boot / counting tries; `bootable` = listed. */
  state: z.enum(['committed', 'trial', 'bootable', 'bad']),
  triesLeft: z.number().int().optional(),
  triesDone: z.number().int().optional(),
});
export type BootEntryView = z.infer<typeof BootEntryView>;

export const BootView = z.object({
  bootloader: z.enum(Bootloaders),
  committed: SlotIdSchema.nullable(),
  oneShot: SlotIdSchema.nullable(),
  entries: z.array(BootEntryView),
});
export type BootView = z.infer<typeof BootView>;

export const OperationView = z.object({
  id: z.string(),
  kind: z.enum(['upgrade', 'rollback', 'reboot']),
  phase: z.string(),
  image: z.string().optional(),
  startedAt: z.string(),
});
export type OperationView = z.infer<typeof OperationView>;

export const ResultView = z.object({
  operationId: z.string(),
  kind: z.enum(['upgrade', 'rollback', 'reboot']),
  result: z.enum(['Succeeded', 'Failed', 'RolledBack']),
  code: z.string().optional(),
  reason: z.string().optional(),
  /** The failure's own sentence, when `reason` is only a word (`HealthDeadline`). */
  message: z.string().max(1000).optional(),
  finishedAt: z.string(),
});
export type ResultView = z.infer<typeof ResultView>;

export const AgentStatus = z.object({
  node: z.string(),
  role: z.enum(['control-plane', 'worker']),
  bootId: z.string(),
  bootedSlot: SlotIdSchema,
  /** The version running now (the booted slot's). */
  version: z.string().nullable(),
  slots: z.array(SlotView),
  boot: BootView,
  phase: z.string(),
  operation: OperationView.nullable(),
  last: ResultView.nullable(),
  /**
   * The machine's hold, expired or not (`null`: none). Absent from agents older than holds, which
   * cannot keep one: the operator then does not push its holds there.
   */
  hold: HoldView.nullable().optional(),
});
export type AgentStatus = z.infer<typeof AgentStatus>;

export const EventStatus = z.enum(['started', 'done', 'skipped', 'failed', 'info']);

/** One journal event, as served over SSE (`event: <kind>`, `id: <operationId>:<seq>`). */
export const AgentEvent = z.object({
  operationId: z.string(),
  seq: z.number().int().nonnegative(),
  /** ISO 8601. */
  time: z.string(),
  kind: z.enum(['phase', 'progress', 'result', 'error', 'log']),
  phase: z.string(),
  status: EventStatus,
  message: z.string(),
  progress: z.object({ bytes: z.number(), total: z.number() }).optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  result: z
    .object({
      result: z.enum(['Succeeded', 'Failed', 'RolledBack']),
      reason: z.string().optional(),
    })
    .optional(),
});
export type AgentEvent = z.infer<typeof AgentEvent>;

/** One entry of `GET /v1/operations`: an operation as the journal's events summarise it. */
export const OperationSummaryView = z.object({
  operationId: z.string(),
  /** ISO 8601 times of the operation's first and last event. */
  firstTime: z.string(),
  lastTime: z.string(),
  events: z.number().int(),
  result: AgentEvent.shape.result,
});
export type OperationSummaryView = z.infer<typeof OperationSummaryView>;

/** Identities in the fleet, carried as certificate subject `O=molt:<role>`. */
export const Role = { Node: 'node', Operator: 'operator', Admin: 'admin' } as const;
export type Role = (typeof Role)[keyof typeof Role];
export const RoleOrganisationPrefix = 'molt:';

export type AgentPermission = 'read' | 'operate' | 'force';
/**
 * What each role may do on an agent: read = status, events, logs, operations, the hold (every GET);
 * operate = every other method (upgrade, rollback, reboot, cancel, set and clear the hold);
 * force = `force` on an operation (past the etcd 2-member rule, the same image, the hold).
 */
export const RolePermissions: Readonly<Record<Role, readonly AgentPermission[]>> = {
  node: ['read'],
  operator: ['read', 'operate'],
  admin: ['read', 'operate', 'force'],
};

/** Exit codes of `molt agent` under the lab firmware. */
export const LabExit = {
  /** The agent asks the firmware to reboot the machine. */
  Reboot: 10,
  /** The agent asks the firmware to power the machine off. */
  PowerOff: 11,
  /** Crash tests: the agent asks the firmware to cut the power (kill everything, boot again). */
  PowerCut: 12,
} as const;

/** Environment the lab firmware passes to the agent it boots. */
export const LabEnv = {
  /** The kernel command line of the entry booted (contains `molt.slot=A|B`). */
  Cmdline: 'MOLT_LAB_CMDLINE',
  /** A fresh id per boot, as `/proc/sys/kernel/random/boot_id`. */
  BootId: 'MOLT_LAB_BOOT_ID',
  /** Crash tests: `<Phase>:<before|after>` makes the agent SIGKILL itself at that point. */
  Fault: 'MOLT_LAB_FAULT',
} as const;

/**
 * Node options `molt agent` runs with: the lab firmware puts them before molt's script, and a real
 * machine's unit should too (`node --max-semi-space-size=1 --no-opt --no-maglev …/molt.js agent`;
 * NODE_OPTIONS accepts only the first). The agent idles almost always, and its one heavy task, a
 * pull, spends its time in native hashing, file writes and undici's WebAssembly parser, so both
 * trade nothing measurable (benchmark P5: a pull's CPU did not grow) for idle memory (P6, ≤ 80 MB):
 * - `--max-semi-space-size=1`: V8's young generation is otherwise 16 MB, ~10 MB of it resident,
 *   for ~2 MB of live objects at idle (−7 MB).
 * - `--no-opt --no-maglev`: what the optimising compilers compile at start is almost all Node's
 *   module loader (~300 modules resolved: path and URL helpers), and merely running them keeps
 *   ~8 MB more of the node binary's machine code resident. Not `--lite-mode`: it turns WebAssembly off, and undici needs it.
 */
export const AgentNodeOptions = ['--max-semi-space-size=1', '--no-opt', '--no-maglev'] as const;

/**
 * SSE event name of the frame that ends a broken event stream (body: {@link ErrorBody}). Not a
 * journal event kind: a journal `error` event (a failed step) is a normal part of a rollback.
 */
export const StreamErrorEvent = 'stream-error';
