// SPDX-License-Identifier: Apache-2.0
/**
 * Server-sent events over a hijacked Fastify reply: `id: <opId>:<seq>`, `event: <kind>`, `data:
 * <AgentEvent JSON>`. Writes respect backpressure, and a failing stream ends with an `event: stream-error`
 * frame carrying an ErrorBody (STYLE §4.5).
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { StreamErrorEvent, type AgentEvent, type ErrorBody } from '../../protocol/agent.ts';

/** An open event stream to one client. */
export interface SseSink {
  send(event: AgentEvent): Promise<void>;
  error(body: ErrorBody): Promise<void>;
  end(): void;
  /** True once the client went away or {@link end} was called. */
  isClosed(): boolean;
  /** Resolves when the client goes away or the stream ends. */
  readonly closed: Promise<void>;
}

/** How often a following stream sends a comment, so dead peers and idle proxies are noticed. */
const keepAliveMs = 15_000;

/** Start an SSE answer on `raw` (the reply must be hijacked first). */
export function openSse(raw: ServerResponse): SseSink {
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
  const timer = setInterval(() => void write(': keep-alive\n\n'), keepAliveMs);
  timer.unref();
  void closedPromise.then(() => {
    clearInterval(timer);
  });

  async function write(frame: string): Promise<void> {
    if (closed || raw.writableEnded) return;
    if (!raw.write(frame)) await Promise.race([once(raw, 'drain'), closedPromise]);
  }

  // Tell EventSource clients to retry soon: the agent goes away during every reboot.
  void write('retry: 2000\n\n');
  return {
    send: (event) =>
      write(
        `id: ${event.operationId}:${event.seq}\nevent: ${event.kind}\ndata: ${JSON.stringify(event)}\n\n`,
      ),
    error: (body) => write(`event: ${StreamErrorEvent}\ndata: ${JSON.stringify(body)}\n\n`),
    end: () => {
      clearInterval(timer);
      if (!raw.writableEnded) raw.end();
    },
    isClosed: () => closed || raw.writableEnded,
    closed: closedPromise,
  };
}

/** A queue fed by journal subscriptions and drained by one writer, so frames never interleave. */
export interface EventQueue {
  push(event: AgentEvent): void;
  /** The next event, or undefined once `closed` resolves. */
  next(closed: Promise<void>): Promise<AgentEvent | undefined>;
}

/** An unbounded FIFO of events (journal appends are few: phases and throttled progress). */
export function createEventQueue(): EventQueue {
  const items: AgentEvent[] = [];
  let wake: (() => void) | undefined;
  return {
    push(event) {
      items.push(event);
      wake?.();
    },
    async next(closed) {
      while (items.length === 0) {
        const woken = new Promise<'event'>((resolve) => {
          wake = () => {
            resolve('event');
          };
        });
        const why = await Promise.race([woken, closed.then(() => 'closed' as const)]);
        wake = undefined;
        if (why === 'closed') return undefined;
      }
      return items.shift();
    },
  };
}
