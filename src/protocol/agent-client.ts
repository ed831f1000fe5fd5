// SPDX-License-Identifier: Apache-2.0
/**
 * The typed client of the agent API (docs/adr/0004 §6), for the CLI, the operator and tests. It
 * takes an injected `fetch`-like function, so it stays pure: the CLI passes undici's `fetch` bound
 * to an mTLS `Agent`. Error answers become MoltErrors with the agent's code, hint and details; a
 * transport failure (that is not already a MoltError) is a retryable MOLT_AGENT_UNREACHABLE, an
 * answer that is not the protocol MOLT_AGENT_PROTOCOL (`http-client.ts`).
 */
import type { z } from 'zod';
import { ErrorCode } from '../core/errors.ts';
import {
  AgentEvent,
  AgentRoutes,
  AgentStatus,
  OperationAccepted,
  OperationSummaryView,
  type CancelRequestBody,
  type RebootRequestBody,
  type RollbackRequestBody,
  type UpgradeRequestBody,
} from './agent.ts';
import { HoldAnswer, type AgentHoldRequestBody } from './agent-hold.ts';
import {
  createTransport,
  deleteJson,
  getJson,
  postJson,
  queryString,
  type HttpFetch,
  type HttpRequest,
  type HttpResponse,
} from './http-client.ts';

/** The part of a fetch `Response` the client reads. */
export type AgentResponse = HttpResponse;

/** The request the client makes. */
export type AgentRequest = HttpRequest;

/** A `fetch`-like function. */
export type AgentFetch = HttpFetch;

/** Options of {@link AgentClient.events}. */
export interface EventsOptions {
  /** The operation; by default the running one, else the most recent. */
  readonly operation?: string;
  /** Keep the stream open for live events until the operation's `result`. */
  readonly follow?: boolean;
  /** Resume after this `<operationId>:<seq>` (sent as `Last-Event-ID`). */
  readonly lastEventId?: string;
}

/** The agent API, typed. */
export interface AgentClient {
  readonly baseUrl: string;
  status(): Promise<AgentStatus>;
  upgrade(body: z.input<typeof UpgradeRequestBody>): Promise<OperationAccepted>;
  rollback(body?: z.input<typeof RollbackRequestBody>): Promise<OperationAccepted>;
  reboot(body?: z.input<typeof RebootRequestBody>): Promise<OperationAccepted>;
  /** Cancel the running pull; names the operation, which then ends Failed `MOLT_CANCELLED`. */
  cancel(body?: z.input<typeof CancelRequestBody>): Promise<OperationAccepted>;
  /** The machine's hold. */
  hold(): Promise<HoldAnswer>;
  /** Hold the machine (replacing any hold it has); answers the hold as the agent keeps it. */
  setHold(body: z.input<typeof AgentHoldRequestBody>): Promise<HoldAnswer>;
  /** Release the machine; releasing one that is not held is not an error. */
  clearHold(): Promise<HoldAnswer>;
  operations(): Promise<OperationSummaryView[]>;
  /** Events of one operation as they are journalled; ends at the stream's end (or the `result`). */
  events(options?: EventsOptions): AsyncIterable<AgentEvent>;
  /** Every journalled event (optionally the last `tail`), live while `follow`. */
  logs(options?: { follow?: boolean; tail?: number }): AsyncIterable<AgentEvent>;
}

/** How errors name the agent, with its codes (every agent client's transport). */
export const AgentPeer = {
  name: 'agent',
  unreachable: ErrorCode.AgentUnreachable,
  protocol: ErrorCode.AgentProtocol,
} as const;

/** A client for the agent at `baseUrl` (`https://host:port`). */
export function createAgentClient(options: { baseUrl: string; fetch: AgentFetch }): AgentClient {
  const t = createTransport({
    ...options,
    peer: AgentPeer,
  });
  return {
    baseUrl: t.baseUrl,
    status: () => t.json(AgentStatus, AgentRoutes.status, getJson),
    upgrade: (body) => t.json(OperationAccepted, AgentRoutes.upgrade, postJson(body)),
    rollback: (body = {}) => t.json(OperationAccepted, AgentRoutes.rollback, postJson(body)),
    reboot: (body = {}) => t.json(OperationAccepted, AgentRoutes.reboot, postJson(body)),
    cancel: (body = {}) => t.json(OperationAccepted, AgentRoutes.cancel, postJson(body)),
    hold: () => t.json(HoldAnswer, AgentRoutes.hold, getJson),
    setHold: (body) => t.json(HoldAnswer, AgentRoutes.hold, postJson(body)),
    clearHold: () => t.json(HoldAnswer, AgentRoutes.hold, deleteJson),
    operations: () => t.json(OperationSummaryView.array(), AgentRoutes.operations, getJson),
    events: (o = {}) =>
      t.stream(AgentEvent, {
        path:
          AgentRoutes.events +
          queryString({ operation: o.operation, follow: o.follow === true ? 'true' : undefined }),
        headers: o.lastEventId === undefined ? {} : { 'last-event-id': o.lastEventId },
      }),
    logs: (o = {}) =>
      t.stream(AgentEvent, {
        path:
          AgentRoutes.logs +
          queryString({ follow: o.follow === true ? 'true' : undefined, tail: o.tail?.toString() }),
        headers: {},
      }),
  };
}
