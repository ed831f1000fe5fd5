// SPDX-License-Identifier: Apache-2.0
/** The operator API's machine inventory: views, holds, registration (routes in operator.ts). */
import { z } from 'zod';
import { parseDuration, parseTime } from '../core/time.ts';

const isoTime = z.string().refine((v) => parseTime(v) !== undefined, {
  message: 'must be an ISO 8601 time with a zone, like 2026-11-24T06:00:00Z',
});
const holdDuration = z.string().refine((v) => (parseDuration(v) ?? 0) > 0, {
  message: 'must be a duration like 30m, 2h or 1d',
});

/** `POST /v1/machines/:id/hold`: no upgrade starts on the machine before `until` (or for `for`). */
export const HoldRequestBody = z
  .strictObject({
    reason: z.string().trim().min(1, 'say why').max(500),
    until: isoTime.optional(),
    for: holdDuration.optional(),
  })
  .refine((b) => (b.until === undefined) !== (b.for === undefined), {
    message: 'give exactly one of until and for',
    path: ['until'],
  });
export type HoldRequestBody = z.infer<typeof HoldRequestBody>;

/** `POST /v1/machines/:id/release`. */
export const ReleaseRequestBody = z.strictObject({});

/** A hold as the operator shows it: why, until when (ISO 8601), and who set it. */
const HoldSummary = z.object({ reason: z.string(), until: z.string(), by: z.string().optional() });

/** A managed machine, its hold, and what the operator last saw of it. */
export const MachineView = z.object({
  id: z.string(),
  endpoint: z.string(),
  role: z.enum(['control-plane', 'worker']),
  pool: z.string(),
  cluster: z.string().optional(),
  labels: z.record(z.string(), z.string()),
  /** Registered through the API, not listed in the fleet file. */
  registered: z.boolean().optional(),
  hold: HoldSummary.optional(),
  /** Absent until this operator has looked (only the leader looks). */
  observed: z
    .object({
      at: z.string(),
      reachable: z.boolean(),
      available: z.boolean(),
      version: z.string().optional(),
      digest: z.string().optional(),
      phase: z.string().optional(),
      operation: z.string().optional(),
      error: z.string().optional(),
      /**
       * Unreachable while an upgrade the operator started is in flight, or within
       * {@link RebootGraceMs} of an answer naming an operation: rebooting, not lost.
       */
      rebooting: z.boolean().optional(),
      /** The slot booted now and the bootloader's committed default (they differ on a trial boot). */
      bootedSlot: z.enum(['A', 'B']).optional(),
      committedSlot: z.enum(['A', 'B']).nullable().optional(),
      /** What each A/B slot holds. */
      slots: z
        .array(
          z.object({
            slot: z.enum(['A', 'B']),
            status: z.string(),
            version: z.string().nullable(),
            /** Why the agent marked the slot bad (`status: bad`). */
            badReason: z.string().optional(),
          }),
        )
        .optional(),
      /** The agent's latest result (`Succeeded`, `Failed`, `RolledBack`) and why. */
      last: z.object({ result: z.string(), reason: z.string().optional() }).optional(),
    })
    .optional(),
});
export type MachineView = z.infer<typeof MachineView>;

/** How long after an answer naming an operation an unreachable machine still counts as rebooting. */
export const RebootGraceMs = 10 * 60_000;

/**
 * `POST /v1/machines/:id/release`'s answer: the machine, and the hold this call lifted — `null`
 * when it had none, so a release and a no-op read differently (absent: an older operator).
 */
export const ReleaseAnswer = MachineView.extend({ released: HoldSummary.nullable().optional() });
export type ReleaseAnswer = z.infer<typeof ReleaseAnswer>;

/**
 * A machine as the dashboard's listener shows it (17): what the page draws and nothing
 * else — no agent endpoint or labels, no error text (it can name addresses). `cluster` and `zone`
 * (the label the pool's `zones` policy names, else `zone` or `topology.kubernetes.io/zone`) are
 * what the page groups and filters by. The hold's reason and who held the machine only for a
 * signed-in person. Every {@link MachineView} but `zone` is one, so the page's code takes both.
 */
export const DashboardMachineView = MachineView.pick({
  id: true,
  role: true,
  pool: true,
  cluster: true,
}).extend({
  zone: z.string().optional(),
  hold: z
    .object({ until: z.string(), reason: z.string().optional(), by: z.string().optional() })
    .optional(),
  observed: MachineView.shape.observed.unwrap().omit({ error: true, digest: true }).optional(),
});
export type DashboardMachineView = z.infer<typeof DashboardMachineView>;

/**
 * `POST /v1/machines`: register a machine (the inventory). An operator or admin may register
 * any machine; a machine may register itself with its own node certificate (the certificate's
 * name must be the id), only as the operator config's `selfRegistration` rules allow (pool, role,
 * cluster, labels) and only at an endpoint whose agent presents that certificate (else
 * MOLT_AGENT_IDENTITY). Registering again updates it. The pool must be one the operator knows.
 */
export const RegisterMachineBody = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'must be a machine name (letters, digits, . _ -)'),
  endpoint: z.url({ protocol: /^https$/, message: 'must be the agent’s https:// URL' }),
  role: z.enum(['control-plane', 'worker']).default('worker'),
  pool: z.string().min(1),
  cluster: z.string().min(1).optional(),
  labels: z.record(z.string(), z.string()).default({}),
});
export type RegisterMachineBody = z.output<typeof RegisterMachineBody>;

/** Answer of `DELETE /v1/machines/:id`. */
export const DeregisterResult = z.object({ id: z.string(), removed: z.boolean() });
export type DeregisterResult = z.infer<typeof DeregisterResult>;
