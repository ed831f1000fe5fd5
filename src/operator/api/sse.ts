// SPDX-License-Identifier: Apache-2.0
/**
 * The history event stream (`GET /v1/events`) over a hijacked Fastify reply: `id: <seq>`, `event:
 * <kind>`, `data: <HistoryEventView JSON>`. Writes respect backpressure; a failing stream ends with
 * an `event: stream-error` frame carrying an ErrorBody (STYLE §4.5). Following polls the store
 * (history has no watch in the store port): a new event reaches followers within one poll period.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { StreamErrorEvent, type ErrorBody } from '../../protocol/agent.ts';
import type { HistoryEvent, OperatorStore } from '../ports/store.ts';
import { historyView } from './views.ts';

/** How often a following stream sends a comment, so dead peers and idle proxies are noticed. */
const keepAliveMs = 15_000;

/** An open event stream to one client. */
export interface HistorySink {
  send(event: HistoryEvent): Promise<void>;
  error(body: ErrorBody): Promise<void>;
  end(): void;
  /** Resolves when the client goes away. */
  readonly closed: Promise<void>;
  isClosed(): boolean;
}

/** Start an SSE answer on `raw` (the reply must be hijacked first). */
export function openHistorySse(raw: ServerResponse): HistorySink {
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
  const write = async (frame: string): Promise<void> => {
    if (closed || raw.writableEnded) return;
    if (!raw.write(frame)) await Promise.race([once(raw, 'drain'), closedPromise]);
  };
  const timer = setInterval(() => void write(': keep-alive\n\n'), keepAliveMs);
  timer.unref();
  void closedPromise.then(() => {
    clearInterval(timer);
  });
  // EventSource clients retry soon: an operator restart (upgrade, failover) cuts every stream.
  void write('retry: 2000\n\n');
  return {
    send: (e) =>
      write(`id: ${String(e.seq)}\nevent: ${e.kind}\ndata: ${JSON.stringify(historyView(e))}\n\n`),
    error: (body) => write(`event: ${StreamErrorEvent}\ndata: ${JSON.stringify(body)}\n\n`),
    end: () => {
      clearInterval(timer);
      if (!raw.writableEnded) raw.end();
    },
    closed: closedPromise,
    isClosed: () => closed || raw.writableEnded,
  };
}

const pageSize = 500;

/**
 * History after `after`, oldest first, at most `limit` events of `rollout` (all when undefined);
 * `last` is the last seq looked at, so a filtered reader resumes past events it skipped.
 */
export async function scanHistory(
  store: OperatorStore,
  o: { readonly after: number; readonly limit: number; readonly rollout?: string | undefined },
): Promise<{ events: HistoryEvent[]; last: number }> {
  if (o.rollout === undefined) {
    const events = await store.history({ afterSeq: o.after, limit: o.limit });
    return { events, last: events.at(-1)?.seq ?? o.after };
  }
  const events: HistoryEvent[] = [];
  let last = o.after;
  for (;;) {
    const page = await store.history({ afterSeq: last, limit: pageSize });
    for (const e of page) {
      last = e.seq;
      if (e.rollout === o.rollout) events.push(e);
      if (events.length >= o.limit) return { events, last };
    }
    if (page.length < pageSize) return { events, last };
  }
}

/** Send history after `after`, then (following) new events every `pollMs` until the client leaves. */
export async function streamHistory(
  store: OperatorStore,
  sink: HistorySink,
  o: { after: number; follow: boolean; rollout: string | undefined; pollMs: number },
): Promise<void> {
  let last = o.after;
  for (;;) {
    const page = await scanHistory(store, { after: last, limit: pageSize, rollout: o.rollout });
    for (const e of page.events) await sink.send(e);
    // Fewer than a page: the scan reached the end of the stored history.
    const caughtUp = page.events.length < pageSize;
    last = page.last;
    if (sink.isClosed() || (!o.follow && caughtUp)) return;
    if (caughtUp) await Promise.race([sleep(o.pollMs), sink.closed]);
    if (sink.isClosed()) return;
  }
}
