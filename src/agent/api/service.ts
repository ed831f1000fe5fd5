// SPDX-License-Identifier: Apache-2.0
/**
 * What the API needs from the agent (docs/adr/0004 §6). The runner implements it; the API only
 * authenticates, validates and streams the journal, so every decision stays in the runner.
 */
import type { Identity } from '../../platform/https/identity.ts';
import type {
  AgentStatus,
  OperationAccepted,
  RebootRequestBody,
  RollbackRequestBody,
  UpgradeRequestBody,
} from '../../protocol/agent.ts';
import type { AgentHoldRequestBody, HoldAnswer } from '../../protocol/agent-hold.ts';

/** A validated operation request; `body` has zod defaults applied (`preserve: true`, …). */
export type ApiOperationRequest =
  | { readonly kind: 'upgrade'; readonly body: UpgradeRequestBody; readonly identity: Identity }
  | { readonly kind: 'rollback'; readonly body: RollbackRequestBody; readonly identity: Identity }
  | { readonly kind: 'reboot'; readonly body: RebootRequestBody; readonly identity: Identity };

/** The agent as the API sees it. */
export interface AgentService {
  /** The machine now: slots, boot view, the running operation and the last result. */
  status(): Promise<AgentStatus>;
  /**
   * Start an operation and resolve once it is accepted (persisted), not when it ends. By the time
   * it resolves, `status().operation` or the journal must name the new operation id, so a client
   * that follows `/v1/events?operation=<id>` at once finds it.
   * @throws MoltError `MOLT_AGENT_BUSY` with `details: {operationId, kind, phase}` while another
   *   operation runs; `MOLT_NO_VALID_SLOT` (rollback without a valid other slot), `MOLT_BAD_INPUT`
   *   / `MOLT_INVALID_REFERENCE` (unusable image reference) — each mapped to its HTTP status.
   */
  submit(request: ApiOperationRequest): Promise<OperationAccepted>;
  /**
   * Cancel the running pull on behalf of `identity`; resolves once the cancel is signalled (the
   * operation's result follows in the journal: Failed `MOLT_CANCELLED`).
   * @throws MoltError `MOLT_NOT_CANCELLABLE` when nothing runs or the operation is past its pull.
   */
  cancel(identity: Identity, operation?: string): Promise<OperationAccepted>;
  /** The machine's hold (docs/adr/0004 §11). */
  hold(): Promise<HoldAnswer>;
  /**
   * Hold the machine on behalf of `identity` (replacing any hold); resolves once it is persisted.
   * @throws MoltError `MOLT_BAD_INPUT` when the hold would end before now.
   */
  setHold(body: AgentHoldRequestBody, identity: Identity): Promise<HoldAnswer>;
  /** Release the machine; resolves once that is persisted. Not held: not an error. */
  clearHold(identity: Identity): Promise<HoldAnswer>;
}
