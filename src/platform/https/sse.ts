// SPDX-License-Identifier: Apache-2.0
/**
 * Server-sent events over a hijacked Fastify reply: `id:`, `event:` and JSON `data:` per item.
 * Writes respect backpressure, a keep-alive comment lets dead peers and idle proxies be noticed,
 * and a failing stream ends with an `event: stream-error` frame carrying an ErrorBody (STYLE §4.5):
 * after the 200 went out, an error can no longer change the status.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { StreamErrorEvent, type ErrorBody } from '../../protocol/agent.ts';
import type { ErrorAnswerer } from './errors.ts';
import { holdStream } from './places.ts';

/** One item as a frame: its resume id, its event kind and its JSON body. */
export interface SseFrame {
  readonly id: string;
  readonly event: string;
  readonly data: unknown;
}

/** An open event stream to one client. */
export interface SseSink<T> {
  send(item: T): Promise<void>;
  error(body: ErrorBody): Promise<void>;
  end(): void;
  /** True once the client went away or {@link end} was called. */
  isClosed(): boolean;
  /** Resolves when the client goes away or the stream ends. */
  readonly closed: Promise<void>;
}

/**
 * How often a following stream sends a comment, so dead peers and idle proxies are noticed; also
 * what keeps a listener's idle timeout (listener.ts) from cutting a healthy follower.
 */
export const sseKeepAliveMs = 15_000;

/** Start an SSE answer on `raw` (the reply must be hijacked first), framing items with `frame`. */
export function openSse<T>(raw: ServerResponse, frame: (item: T) => SseFrame): SseSink<T> {
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let closed = false;
  const closedPromise = new Promise<void>((resolve) => {
    raw.once('close', () => {
      closed = true;
      resolve();
    });
  });
  const write = async (text: string): Promise<void> => {
    if (closed || raw.writableEnded) return;
    if (!raw.write(text)) await Promise.race([once(raw, 'drain'), closedPromise]);
  };
  const timer = setInterval(() => void write(': keep-alive\n\n'), sseKeepAliveMs);
  timer.unref();
  void closedPromise.then(() => {
    clearInterval(timer);
  });
  // Tell EventSource clients to retry soon: the agent goes away during every reboot, and an
  // operator restart (upgrade, failover) cuts every stream.
  void write('retry: 2000\n\n');
  return {
    send: (item) => {
      const f = frame(item);
      return write(`id: ${f.id}\nevent: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`);
    },
    error: (body) => write(`event: ${StreamErrorEvent}\ndata: ${JSON.stringify(body)}\n\n`),
    end: () => {
      clearInterval(timer);
      if (!raw.writableEnded) raw.end();
    },
    isClosed: () => closed || raw.writableEnded,
    closed: closedPromise,
  };
}

/** How a stream's failure is answered and reported (the API's own answerer and bug hook). */
export interface StreamErrors {
  readonly errorAnswer: ErrorAnswerer;
  readonly onInternalError?: ((error: unknown) => void) | undefined;
}

/**
 * Hand the socket to an SSE writer: hijack `reply`, open the sink, run the stream, and end it with
 * an `event: stream-error` frame if `run` throws. A peer already holding its most open streams
 * (listener.ts, `maxStreamsPerPeer`) gets 429 `MOLT_CONNECTION_LIMIT` instead: a follower holds
 * its stream for as long as it likes, so a certificate that may read must not hold them unbounded.
 */
export async function serveSse<T>(
  reply: FastifyReply,
  open: (raw: ServerResponse) => SseSink<T>,
  run: (sink: SseSink<T>) => Promise<void>,
  errors: StreamErrors,
): Promise<void> {
  const slot = holdStream(reply.raw.socket ?? {});
  if (!slot.granted) {
    await reply.code(slot.refusal.status).header('retry-after', '1').send(slot.refusal.body);
    return;
  }
  reply.hijack();
  const sink = open(reply.raw);
  try {
    await run(sink);
  } catch (e) {
    const answer = errors.errorAnswer(e);
    if (answer.status === 500) errors.onInternalError?.(e);
    await sink.error(answer.body);
  } finally {
    sink.end();
    slot.release();
  }
}
