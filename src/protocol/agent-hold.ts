// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's hold (docs/adr/0004 §11): a person's "do not upgrade this machine before `until`",
 * kept by the machine's own agent so that it also stops direct upgrades (`molt node upgrade`).
 * `GET /v1/hold` reads it, `POST /v1/hold` sets (or replaces) it, `DELETE /v1/hold` clears it;
 * `GET /v1/status` carries it too. Field names are a public contract, as in `agent.ts`.
 */
import { z } from 'zod';
import { parseDuration, parseTime } from '../core/time.ts';

const isoTime = z.string().refine((v) => parseTime(v) !== undefined, {
  message: 'must be an ISO 8601 time with a zone, like 2026-11-24T06:00:00Z',
});
const holdDuration = z.string().refine((v) => (parseDuration(v) ?? 0) > 0, {
  message: 'must be a duration like 30m, 2h or 1d',
});

/**
 * `POST /v1/hold` (operator, admin): hold the machine until `until` or for `for`. The operator
 * names the person it pushes the hold for in `onBehalfOf`; a hold that names one is the operator's
 * to replace and clear, any other is left to people (`molt node release`).
 */
export const AgentHoldRequestBody = z
  .strictObject({
    reason: z.string().trim().min(1, 'say why').max(500),
    until: isoTime.optional(),
    for: holdDuration.optional(),
    onBehalfOf: z.string().trim().min(1).max(200).optional(),
  })
  .refine((b) => (b.until === undefined) !== (b.for === undefined), {
    message: 'give exactly one of until and for',
    path: ['until'],
  });
export type AgentHoldRequestBody = z.infer<typeof AgentHoldRequestBody>;

/** `DELETE /v1/hold` takes no fields. */
export const AgentReleaseRequestBody = z.strictObject({});

/** A hold as the agent keeps it (and persists it, in `state/hold.json`). */
export const HoldView = z.object({
  reason: z.string(),
  /** ISO 8601: upgrades are refused before this time. */
  until: z.string(),
  /** The certificate that set it (CN and role; the role names are `Role` in agent.ts). */
  setBy: z.object({ name: z.string(), role: z.enum(['node', 'operator', 'admin']) }),
  /** The person the operator pushed it for; absent for a hold set directly on the agent. */
  onBehalfOf: z.string().optional(),
  /** ISO 8601. */
  setAt: z.string(),
});
export type HoldView = z.infer<typeof HoldView>;

/**
 * Answer of every `/v1/hold` route: the hold now (`null`: none). `DELETE` also says which hold it
 * lifted in `released` (`null`: there was none), so a release and a no-op read differently.
 */
export const HoldAnswer = z.object({
  hold: HoldView.nullable(),
  released: HoldView.nullable().optional(),
});
export type HoldAnswer = z.infer<typeof HoldAnswer>;

/** Whether `hold` still refuses upgrades at `now` (epoch ms): `until` is in the future. */
export function holdActive(hold: HoldView | null | undefined, now: number): hold is HoldView {
  return hold != null && (parseTime(hold.until) ?? 0) > now;
}
