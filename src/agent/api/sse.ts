// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's event streams: journal events as server-sent events (`platform/https/sse.ts`) with
 * `id: <opId>:<seq>` (what a follower sends back as `Last-Event-ID`), `event: <kind>`, `data:
 * <AgentEvent JSON>`, and the queue that feeds one stream from journal subscriptions.
 */
import type { ServerResponse } from 'node:http';
import type { AgentEvent } from '../../protocol/agent.ts';
import { openSse, type SseSink as PlatformSseSink } from '../../platform/https/sse.ts';

/** An open event stream to one client. */
export type SseSink = PlatformSseSink<AgentEvent>;

/** Start an event stream on `raw` (the reply must be hijacked first). */
export function openEventSse(raw: ServerResponse): SseSink {
  return openSse(raw, (event: AgentEvent) => ({
    id: `${event.operationId}:${event.seq}`,
    event: event.kind,
    data: event,
  }));
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
