// SPDX-License-Identifier: Apache-2.0
/**
 * What the typed clients of the agent API (`agent-client.ts`) and the operator API
 * (`operator-client.ts`) share: the injected `fetch`-like function, JSON answers checked against
 * protocol's schemas, error answers turned back into {@link MoltError}s with the server's code, hint
 * and details, and server-sent event streams. Errors name the peer and carry its codes: a
 * transport failure that is not already a MoltError is the retryable `…_UNREACHABLE`, an answer
 * that is not this protocol `…_PROTOCOL`.
 */
import type { z } from 'zod';
import { MoltError, type ErrorCode } from '../core/errors.ts';
import { ErrorBody, StreamErrorEvent } from './agent.ts';
import { connectFailure } from './connect-failure.ts';
import { parseSse } from './sse.ts';

/** The part of a fetch `Response` the clients read. */
export interface HttpResponse {
  readonly status: number;
  text(): Promise<string>;
  readonly body: AsyncIterable<Uint8Array> | null;
}

/** The request a client makes; a byte-stream body (an etcd snapshot upload) is sent as it comes. */
export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | AsyncIterable<Uint8Array>;
  /**
   * How long the answer may take, for a request the daemon answers only once a long piece of work
   * is done (an etcd restore restarts the machine's services); else the connection's bound.
   */
  readonly answerWithinMs?: number;
}

/** A `fetch`-like function (the CLI passes undici's `fetch` over an mTLS `Agent`). */
export type HttpFetch = (url: string, init: HttpRequest) => Promise<HttpResponse>;

/** The daemon a client talks to, as its errors name it. */
export interface Peer {
  readonly name: 'agent' | 'operator';
  /** A transport failure or a broken stream (retryable). */
  readonly unreachable: ErrorCode;
  /** An answer that is not molt's protocol. */
  readonly protocol: ErrorCode;
}

/** A stream request: `url` is how errors name it (default: the base URL and `path`). */
export interface StreamRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly url?: string;
}

/** Requests to one daemon at `baseUrl`. */
export interface Transport {
  readonly baseUrl: string;
  /** The body of a 2xx answer; any other status throws the server's error. */
  text(path: string, init: HttpRequest): Promise<string>;
  /** A 2xx answer, its body unread (a byte stream); any other status throws the server's error. */
  open(path: string, init: HttpRequest): Promise<HttpResponse>;
  /** A 2xx answer parsed with `schema`. */
  json<S extends z.ZodType>(schema: S, path: string, init: HttpRequest): Promise<z.output<S>>;
  /** The events of an SSE answer, each parsed with `schema`, until the stream ends. */
  stream<S extends z.ZodType>(schema: S, request: StreamRequest): AsyncIterable<z.output<S>>;
}

/** A JSON GET. */
export const getJson: HttpRequest = { method: 'GET', headers: { accept: 'application/json' } };

/** A JSON POST of `body`. */
export const postJson = (body: unknown): HttpRequest => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: JSON.stringify(body),
});

/** A JSON PUT of `body`. */
export const putJson = (body: unknown): HttpRequest => ({
  method: 'PUT',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: JSON.stringify(body),
});

/** A DELETE that expects a JSON answer. */
export const deleteJson: HttpRequest = {
  method: 'DELETE',
  headers: { accept: 'application/json' },
};

/** `?a=1&b=2` of the defined values, or '' (protocol has no URLSearchParams: it is not in ES2023). */
export function queryString(values: Record<string, string | undefined>): string {
  const pairs = Object.entries(values).flatMap(([k, v]) =>
    v === undefined ? [] : [`${k}=${encodeURIComponent(v)}`],
  );
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

/** A transport to `peer` at `baseUrl` (`https://host:port`; trailing slashes are dropped). */
export function createTransport(o: { baseUrl: string; fetch: HttpFetch; peer: Peer }): Transport {
  const { peer } = o;
  const baseUrl = o.baseUrl.replace(/\/+$/, '');
  const call = async (path: string, init: HttpRequest): Promise<HttpResponse> => {
    try {
      return await o.fetch(baseUrl + path, init);
    } catch (e) {
      if (e instanceof MoltError) throw e;
      throw new MoltError(
        peer.unreachable,
        `cannot reach the ${peer.name} at ${baseUrl}: ${reason(e)}`,
        {
          cause: e,
          retryable: true,
          hint: `check --endpoint and that the ${peer.name} is running`,
        },
      );
    }
  };
  const text = async (path: string, init: HttpRequest): Promise<string> => {
    const res = await call(path, init);
    const body = await res.text();
    if (res.status < 200 || res.status >= 300)
      throw errorFromAnswer(peer, res.status, body, baseUrl + path);
    return body;
  };
  const open = async (path: string, init: HttpRequest): Promise<HttpResponse> => {
    const res = await call(path, init);
    if (res.status < 200 || res.status >= 300)
      throw errorFromAnswer(peer, res.status, await res.text(), baseUrl + path);
    return res;
  };
  return {
    baseUrl,
    text,
    open,
    json: async (schema, path, init) =>
      parseAnswer(peer, schema, await text(path, init), baseUrl + path),
    stream: (schema, r) =>
      streamEvents(peer, schema, {
        call,
        path: r.path,
        headers: r.headers,
        url: r.url ?? baseUrl + r.path,
      }),
  };
}

interface StreamArgs {
  readonly call: (path: string, init: HttpRequest) => Promise<HttpResponse>;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly url: string;
}

async function* streamEvents<S extends z.ZodType>(
  peer: Peer,
  schema: S,
  a: StreamArgs,
): AsyncGenerator<z.output<S>> {
  const res = await a.call(a.path, {
    method: 'GET',
    headers: { accept: 'text/event-stream', ...a.headers },
  });
  if (res.status !== 200) throw errorFromAnswer(peer, res.status, await res.text(), a.url);
  if (res.body === null) return;
  const frames = parseSse(res.body);
  try {
    for (;;) {
      const next = await nextFrame(peer, frames, a.url);
      if (next.done === true) return;
      if (next.value.event === StreamErrorEvent)
        throw errorFromAnswer(peer, 500, next.value.data, a.url);
      yield parseAnswer(peer, schema, next.value.data, a.url);
    }
  } finally {
    // A consumer that stops early (a follower satisfied before the server ends the stream) must
    // close the body: an open event stream holds its connection, and closing the HTTP client
    // would wait for it forever.
    await frames.return(undefined).catch(() => undefined);
  }
}

async function nextFrame(
  peer: Peer,
  frames: AsyncGenerator<{ event: string; data: string }>,
  url: string,
): Promise<IteratorResult<{ event: string; data: string }>> {
  try {
    return await frames.next();
  } catch (e) {
    throw new MoltError(peer.unreachable, `the event stream from ${url} broke: ${reason(e)}`, {
      cause: e,
      retryable: true,
    });
  }
}

/** A MoltError from an error answer: the server's own code, message, hint and details when it sent an ErrorBody. */
function errorFromAnswer(peer: Peer, status: number, text: string, url: string): MoltError {
  const parsed = ErrorBody.safeParse(safeJson(text));
  // A 503 without molt's body is the HTTP server saying the daemon is not serving right now — an
  // agent closing its API to reboot, a daemon starting or stopping (Fastify answers requests that
  // arrive while it closes so). That is "unreachable for a moment", to be waited out like a refused
  // connection; calling it garbage made a reboot's follower fail and could pause a rollout.
  if (!parsed.success && status === 503)
    return new MoltError(
      peer.unreachable,
      `the ${peer.name} at ${url} is not serving (HTTP 503): it is stopping or starting`,
      { retryable: true, hint: `try again in a moment; the ${peer.name} may be rebooting` },
    );
  if (!parsed.success) {
    return new MoltError(
      peer.protocol,
      `${url} answered HTTP ${status} without a molt error body: ${text.slice(0, 200)}`,
      { hint: `is --endpoint a molt ${peer.name}?` },
    );
  }
  const b = parsed.data;
  return new MoltError(b.code as ErrorCode, b.message, {
    ...(b.hint !== undefined && { hint: b.hint }),
    ...(b.details !== undefined && { details: b.details }),
    // 429: a cap the caller holds (MOLT_CONNECTION_LIMIT), free again once its connections close.
    retryable: status >= 500 || status === 429,
  });
}

function parseAnswer<S extends z.ZodType>(
  peer: Peer,
  schema: S,
  text: string,
  url: string,
): z.output<S> {
  const r = schema.safeParse(safeJson(text));
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where =
    issue === undefined ? '' : `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`;
  throw new MoltError(peer.protocol, `the answer of ${url} is not what molt expects (${where})`, {
    hint: `the ${peer.name} may run a different molt version`,
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const reason = (e: unknown): string => connectFailure(e).text;
