// SPDX-License-Identifier: Apache-2.0
/**
 * The typed client of the operator API (docs/adr/0005 §5), for `molt rollout`, `molt machine`, the
 * dashboard and tests. Like the agent's client it takes an injected `fetch`-like function (the CLI
 * passes undici's `fetch` over an mTLS `Agent`). Error answers become {@link MoltError}s with the
 * operator's code, hint and details; a transport failure that is not already a MoltError is a
 * retryable `MOLT_OPERATOR_UNREACHABLE`; an answer that is not this protocol is
 * `MOLT_OPERATOR_PROTOCOL`.
 */
import type { z } from 'zod';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { ErrorBody, StreamErrorEvent } from './agent.ts';
import type { AgentFetch, AgentRequest, AgentResponse } from './agent-client.ts';
import {
  HistoryEventView,
  MachineView,
  OperatorRoutes,
  PlanView,
  RolloutActionResult,
  RolloutSummaryView,
  RolloutView,
  operatorPath,
  type HoldRequestBody,
} from './operator.ts';
import { parseSse } from './sse.ts';

/** A `fetch`-like function (the same shape the agent client takes). */
export type OperatorFetch = AgentFetch;

/** Options of {@link OperatorClient.events}. */
export interface OperatorEventsOptions {
  /** Keep the stream open for new events (the operator polls its store for them). */
  readonly follow?: boolean;
  /** Only this rollout's events. */
  readonly rollout?: string;
  /** Resume after this seq (sent as `Last-Event-ID`). */
  readonly after?: number;
}

/** The operator API, typed. */
export interface OperatorClient {
  readonly baseUrl: string;
  rollouts(): Promise<RolloutSummaryView[]>;
  rollout(id: string): Promise<RolloutView>;
  pause(id: string, body?: { reason?: string }): Promise<RolloutActionResult>;
  resume(id: string, body?: { force?: boolean }): Promise<RolloutActionResult>;
  approve(id: string): Promise<RolloutActionResult>;
  machines(): Promise<MachineView[]>;
  hold(id: string, body: HoldRequestBody): Promise<MachineView>;
  release(id: string): Promise<MachineView>;
  history(options?: {
    after?: number;
    limit?: number;
    rollout?: string;
  }): Promise<HistoryEventView[]>;
  /** History events as SSE; ends with the stream (not following) or when the consumer stops. */
  events(options?: OperatorEventsOptions): AsyncIterable<HistoryEventView>;
  plan(options?: { explain?: boolean }): Promise<PlanView>;
  /** The Prometheus exposition text of `GET /metrics`. */
  metrics(): Promise<string>;
}

/** A client for the operator at `baseUrl` (`https://host:port`). */
export function createOperatorClient(options: {
  baseUrl: string;
  fetch: OperatorFetch;
}): OperatorClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const call = async (path: string, init: AgentRequest): Promise<AgentResponse> => {
    try {
      return await options.fetch(baseUrl + path, init);
    } catch (e) {
      if (e instanceof MoltError) throw e;
      throw new MoltError(
        ErrorCode.OperatorUnreachable,
        `cannot reach the operator at ${baseUrl}: ${reason(e)}`,
        { cause: e, retryable: true, hint: 'check --endpoint and that the operator is running' },
      );
    }
  };
  const text = async (path: string, init: AgentRequest): Promise<string> => {
    const res = await call(path, init);
    const body = await res.text();
    if (res.status < 200 || res.status >= 300)
      throw errorFromAnswer(res.status, body, baseUrl + path);
    return body;
  };
  const json = async <S extends z.ZodType>(
    schema: S,
    path: string,
    init: AgentRequest,
  ): Promise<z.output<S>> => parseAnswer(schema, await text(path, init), baseUrl + path);
  const get = { method: 'GET', headers: { accept: 'application/json' } } as const;
  const post = (body: unknown): AgentRequest => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const action = (route: string, id: string, body: unknown): Promise<RolloutActionResult> =>
    json(RolloutActionResult, operatorPath(route, id), post(body));
  return {
    baseUrl,
    rollouts: () => json(RolloutSummaryView.array(), OperatorRoutes.rollouts, get),
    rollout: (id) => json(RolloutView, operatorPath(OperatorRoutes.rollout, id), get),
    pause: (id, body = {}) => action(OperatorRoutes.pause, id, body),
    resume: (id, body = {}) => action(OperatorRoutes.resume, id, body),
    approve: (id) => action(OperatorRoutes.approve, id, {}),
    machines: () => json(MachineView.array(), OperatorRoutes.machines, get),
    hold: (id, body) => json(MachineView, operatorPath(OperatorRoutes.hold, id), post(body)),
    release: (id) => json(MachineView, operatorPath(OperatorRoutes.release, id), post({})),
    history: (o = {}) =>
      json(
        HistoryEventView.array(),
        OperatorRoutes.history +
          queryString({
            after: o.after?.toString(),
            limit: o.limit?.toString(),
            rollout: o.rollout,
          }),
        get,
      ),
    events: (o = {}) =>
      streamEvents({
        call,
        url: baseUrl + OperatorRoutes.events,
        path:
          OperatorRoutes.events +
          queryString({ follow: o.follow === true ? 'true' : undefined, rollout: o.rollout }),
        headers: o.after === undefined ? {} : { 'last-event-id': String(o.after) },
      }),
    plan: (o = {}) =>
      json(
        PlanView,
        OperatorRoutes.plan + queryString({ explain: o.explain === true ? 'true' : undefined }),
        get,
      ),
    metrics: () =>
      text(OperatorRoutes.metrics, { method: 'GET', headers: { accept: 'text/plain' } }),
  };
}

/** `?a=1&b=2` of the defined values, or ''. */
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

async function* streamEvents(a: StreamArgs): AsyncGenerator<HistoryEventView> {
  const res = await a.call(a.path, {
    method: 'GET',
    headers: { accept: 'text/event-stream', ...a.headers },
  });
  if (res.status !== 200) throw errorFromAnswer(res.status, await res.text(), a.url);
  if (res.body === null) return;
  const frames = parseSse(res.body);
  try {
    for (;;) {
      let next: IteratorResult<{ event: string; data: string }>;
      try {
        next = await frames.next();
      } catch (e) {
        throw new MoltError(
          ErrorCode.OperatorUnreachable,
          `the event stream from ${a.url} broke: ${reason(e)}`,
          { cause: e, retryable: true },
        );
      }
      if (next.done === true) return;
      if (next.value.event === StreamErrorEvent) throw errorFromAnswer(500, next.value.data, a.url);
      yield parseAnswer(HistoryEventView, next.value.data, a.url);
    }
  } finally {
    // A consumer that stops early must close the body, or the connection stays held.
    await frames.return(undefined).catch(() => undefined);
  }
}

/** A MoltError from an error answer: the operator's own code, message, hint and details. */
function errorFromAnswer(status: number, text: string, url: string): MoltError {
  const parsed = ErrorBody.safeParse(safeJson(text));
  if (!parsed.success) {
    return new MoltError(
      ErrorCode.OperatorProtocol,
      `${url} answered HTTP ${status} without a molt error body: ${text.slice(0, 200)}`,
      { hint: 'is --endpoint a molt operator?' },
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
    ErrorCode.OperatorProtocol,
    `the answer of ${url} is not what molt expects (${where})`,
    { hint: 'the operator may run a different molt version' },
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
