// SPDX-License-Identifier: Apache-2.0
/**
 * The typed client of the agent API (docs/adr/0004 §6), for the CLI, the operator and tests. It
 * takes an injected `fetch`-like function, so it stays pure: the CLI passes undici's `fetch` bound
 * to an mTLS `Agent`. Error answers become {@link MoltError}s with the agent's code, hint and
 * details; a transport failure (that is not already a MoltError) is a retryable
 * MOLT_AGENT_UNREACHABLE.
 */
import type { z } from 'zod';
import { ErrorCode, MoltError } from '../core/errors.ts';
import {
  AgentEvent,
  AgentRoutes,
  AgentStatus,
  ErrorBody,
  OperationAccepted,
  OperationSummaryView,
  StreamErrorEvent,
  type RebootRequestBody,
  type RollbackRequestBody,
  type UpgradeRequestBody,
} from './agent.ts';
import { parseSse } from './sse.ts';

/** The part of a fetch `Response` the client reads. */
export interface AgentResponse {
  readonly status: number;
  text(): Promise<string>;
  readonly body: AsyncIterable<Uint8Array> | null;
}

/** The request the client makes. */
export interface AgentRequest {
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** A `fetch`-like function. */
export type AgentFetch = (url: string, init: AgentRequest) => Promise<AgentResponse>;

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
  operations(): Promise<OperationSummaryView[]>;
  /** Events of one operation as they are journalled; ends at the stream's end (or the `result`). */
  events(options?: EventsOptions): AsyncIterable<AgentEvent>;
  /** Every journalled event (optionally the last `tail`), live while `follow`. */
  logs(options?: { follow?: boolean; tail?: number }): AsyncIterable<AgentEvent>;
}

/** A client for the agent at `baseUrl` (`https://host:port`). */
export function createAgentClient(options: { baseUrl: string; fetch: AgentFetch }): AgentClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const call = async (path: string, init: AgentRequest): Promise<AgentResponse> => {
    try {
      return await options.fetch(baseUrl + path, init);
    } catch (e) {
      if (e instanceof MoltError) throw e;
      throw new MoltError(
        ErrorCode.AgentUnreachable,
        `cannot reach the agent at ${baseUrl}: ${reason(e)}`,
        {
          cause: e,
          retryable: true,
          hint: 'check --endpoint and that the agent is running',
        },
      );
    }
  };
  const json = async <S extends z.ZodType>(
    schema: S,
    path: string,
    init: AgentRequest,
  ): Promise<z.output<S>> => {
    const res = await call(path, init);
    const text = await res.text();
    if (res.status < 200 || res.status >= 300)
      throw errorFromAnswer(res.status, text, baseUrl + path);
    return parseAnswer(schema, text, baseUrl + path);
  };
  const get = { method: 'GET', headers: { accept: 'application/json' } } as const;
  const post = (body: unknown): AgentRequest => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const stream = (path: string, headers: Record<string, string>): AsyncIterable<AgentEvent> =>
    streamEvents({ call, url: baseUrl + path, path, headers });
  return {
    baseUrl,
    status: () => json(AgentStatus, AgentRoutes.status, get),
    upgrade: (body) => json(OperationAccepted, AgentRoutes.upgrade, post(body)),
    rollback: (body = {}) => json(OperationAccepted, AgentRoutes.rollback, post(body)),
    reboot: (body = {}) => json(OperationAccepted, AgentRoutes.reboot, post(body)),
    operations: () => json(OperationSummaryView.array(), AgentRoutes.operations, get),
    events: (o = {}) =>
      stream(
        AgentRoutes.events +
          queryString({ operation: o.operation, follow: o.follow === true ? 'true' : undefined }),
        o.lastEventId === undefined ? {} : { 'last-event-id': o.lastEventId },
      ),
    logs: (o = {}) =>
      stream(
        AgentRoutes.logs +
          queryString({ follow: o.follow === true ? 'true' : undefined, tail: o.tail?.toString() }),
        {},
      ),
  };
}

/** `?a=1&b=2` of the defined values, or '' (protocol has no URLSearchParams: it is not in ES2023). */
function queryString(values: Record<string, string | undefined>): string {
  const pairs = Object.entries(values).flatMap(([k, v]) =>
    v === undefined ? [] : [`${k}=${encodeURIComponent(v)}`],
  );
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

interface StreamArgs {
  readonly call: (path: string, init: AgentRequest) => Promise<AgentResponse>;
  readonly url: string;
  readonly path: string;
  readonly headers: Record<string, string>;
}

async function* streamEvents(a: StreamArgs): AsyncGenerator<AgentEvent> {
  const res = await a.call(a.path, {
    method: 'GET',
    headers: { accept: 'text/event-stream', ...a.headers },
  });
  if (res.status !== 200) throw errorFromAnswer(res.status, await res.text(), a.url);
  if (res.body === null) return;
  const frames = parseSse(res.body);
  try {
    for (;;) {
      const next = await nextFrame(frames, a.url);
      if (next.done === true) return;
      if (next.value.event === StreamErrorEvent) throw errorFromAnswer(500, next.value.data, a.url);
      yield parseAnswer(AgentEvent, next.value.data, a.url);
    }
  } finally {
    // A consumer that stops early (a follower satisfied before the agent ends the stream) must
    // close the body: an open event stream holds its connection, and closing the HTTP client
    // would wait for it forever.
    await frames.return(undefined).catch(() => undefined);
  }
}

async function nextFrame(
  frames: AsyncGenerator<{ event: string; data: string }>,
  url: string,
): Promise<IteratorResult<{ event: string; data: string }>> {
  try {
    return await frames.next();
  } catch (e) {
    throw new MoltError(
      ErrorCode.AgentUnreachable,
      `the event stream from ${url} broke: ${reason(e)}`,
      {
        cause: e,
        retryable: true,
      },
    );
  }
}

/** A MoltError from an error answer: the agent's own code, message, hint and details when it sent an ErrorBody. */
function errorFromAnswer(status: number, text: string, url: string): MoltError {
  const body = safeJson(text);
  const parsed = ErrorBody.safeParse(body);
  if (!parsed.success) {
    return new MoltError(
      ErrorCode.AgentProtocol,
      `${url} answered HTTP ${status} without a molt error body: ${text.slice(0, 200)}`,
      {
        hint: 'is --endpoint a molt agent?',
      },
    );
  }
  const b = parsed.data;
  return new MoltError(b.code as ErrorCode, b.message, {
    ...(b.hint !== undefined && { hint: b.hint }),
    ...(b.details !== undefined && { details: b.details }),
    retryable: status >= 500,
  });
}

function parseAnswer<S extends z.ZodType>(schema: S, text: string, url: string): z.output<S> {
  const r = schema.safeParse(safeJson(text));
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where =
    issue === undefined ? '' : `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`;
  throw new MoltError(
    ErrorCode.AgentProtocol,
    `the answer of ${url} is not what molt expects (${where})`,
    {
      hint: 'the agent may run a different molt version',
    },
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function reason(e: unknown): string {
  const inner = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  if (!(inner instanceof Error)) return String(inner);
  const code = (inner as { code?: unknown }).code;
  return typeof code === 'string' ? `${code} (${inner.message})` : inner.message;
}
