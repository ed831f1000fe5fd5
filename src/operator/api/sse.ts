// SPDX-License-Identifier: Apache-2.0
/**
 * The history event stream (`GET /v1/events`) as server-sent events (`platform/https/sse.ts`):
 * `id: <seq>`, `event: <kind>`, `data: <HistoryEventView JSON>`. Following polls the store
 * (history has no watch in the store port): a new event reaches followers within one poll period.
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSse, type SseSink } from '../../platform/https/sse.ts';
import type { HistoryEvent, OperatorStore } from '../ports/store.ts';
import { historyView } from './views.ts';

/** An open history stream to one client. */
export type HistorySink = SseSink<HistoryEvent>;

/** Start a history stream on `raw` (the reply must be hijacked first). */
export function openHistorySse(raw: ServerResponse): HistorySink {
  return openSse(raw, (e: HistoryEvent) => ({
    id: String(e.seq),
    event: e.kind,
    data: historyView(e),
  }));
}

const pageSize = 500;

/** Which events a reader wants: those of a rollout, of a machine, or both; all when neither. */
export interface HistoryFilter {
  readonly rollout?: string | undefined;
  readonly machine?: string | undefined;
}

const matches = (e: HistoryEvent, f: HistoryFilter): boolean =>
  (f.rollout === undefined || e.rollout === f.rollout) &&
  (f.machine === undefined || e.machine === f.machine);

/**
 * History after `after`, oldest first, at most `limit` events matching the filter; `last` is the
 * last seq looked at, so a filtered reader resumes past events it skipped.
 */
export async function scanHistory(
  store: OperatorStore,
  o: HistoryFilter & { readonly after: number; readonly limit: number },
): Promise<{ events: HistoryEvent[]; last: number }> {
  if (o.rollout === undefined && o.machine === undefined) {
    const events = await store.history({ afterSeq: o.after, limit: o.limit });
    return { events, last: events.at(-1)?.seq ?? o.after };
  }
  const events: HistoryEvent[] = [];
  let last = o.after;
  for (;;) {
    const page = await store.history({ afterSeq: last, limit: pageSize });
    for (const e of page) {
      last = e.seq;
      if (matches(e, o)) events.push(e);
      if (events.length >= o.limit) return { events, last };
    }
    if (page.length < pageSize) return { events, last };
  }
}

/** Send history after `after`, then (following) new events every `pollMs` until the client leaves. */
export async function streamHistory(
  store: OperatorStore,
  sink: HistorySink,
  o: HistoryFilter & { after: number; follow: boolean; pollMs: number },
): Promise<void> {
  let last = o.after;
  for (;;) {
    const page = await scanHistory(store, { ...o, after: last, limit: pageSize });
    for (const e of page.events) await sink.send(e);
    // Fewer than a page: the scan reached the end of the stored history.
    const caughtUp = page.events.length < pageSize;
    last = page.last;
    if (sink.isClosed() || (!o.follow && caughtUp)) return;
    if (caughtUp) await Promise.race([sleep(o.pollMs), sink.closed]);
    if (sink.isClosed()) return;
  }
}
