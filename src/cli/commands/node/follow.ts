// SPDX-License-Identifier: Apache-2.0
/**
 * Follow one operation to its result across the agent's reboot: the agent goes away mid-upgrade
 * (connection refused or reset, stream cut), so a retryable failure means wait and reconnect with
 * `Last-Event-ID`, until the `result` event or until the agent stayed away too long. Events come
 * from the agent's journal, so nothing is lost or repeated across the gap.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ErrorCode,
  MoltError,
  isMoltError,
  type AgentClient,
  type AgentEvent,
} from '../../../protocol/index.ts';

/** Options of {@link followOperation}. */
export interface FollowOptions {
  /** The operation; by default the agent's running (else latest) one. */
  readonly operation?: string;
  /** Give up after this long without reaching the agent. */
  readonly reconnectTimeoutMs: number;
  /** Called for every event, in order, each once. */
  readonly onEvent: (e: AgentEvent) => void;
  /** Called once per outage, when the first reconnect attempt starts. */
  readonly onOutage?: (e: MoltError) => void;
  /** Called when the stream is back after an outage. */
  readonly onReconnected?: () => void;
  /**
   * Also stop when the operation reaches `Staged` (an upgrade asked with `--stage`: it waits
   * there for a reboot, which may be days away, and logs no result until then).
   */
  readonly untilStaged?: boolean;
}

const firstDelayMs = 250;
const maxDelayMs = 3_000;

/** Where a follower is: what to resume after, and when it last heard from the agent. */
interface Cursor {
  operation: string | undefined;
  lastEventId: string | undefined;
  lastContact: number;
  outage: boolean;
  /** Wait before the next attempt; doubles while the agent stays away, reset by any event. */
  delay: number;
}

/**
 * Stream events until the operation's result (returned; or its `Staged` phase event with
 * `untilStaged`) or an error that retrying cannot fix.
 */
export async function followOperation(client: AgentClient, o: FollowOptions): Promise<AgentEvent> {
  const cursor: Cursor = {
    operation: o.operation,
    lastEventId: undefined,
    lastContact: Date.now(),
    outage: false,
    delay: firstDelayMs,
  };
  for (;;) {
    try {
      const result = await followOnce(client, cursor, o);
      if (result !== undefined) return result;
      // The agent ended the stream without a result: it is shutting down (a reboot). Reconnect.
      throw new MoltError(
        ErrorCode.AgentUnreachable,
        `the agent at ${client.baseUrl} closed the event stream`,
        { retryable: true },
      );
    } catch (e) {
      if (!isMoltError(e) || !e.retryable) throw e;
      if (!cursor.outage) o.onOutage?.(e);
      cursor.outage = true;
      if (Date.now() - cursor.lastContact > o.reconnectTimeoutMs)
        throw gaveUp(client, cursor.operation, o.reconnectTimeoutMs, e);
    }
    await sleep(cursor.delay);
    cursor.delay = Math.min(cursor.delay * 2, maxDelayMs);
  }
}

/** One connection: events until the result (returned) or the stream's end (undefined). */
async function followOnce(
  client: AgentClient,
  c: Cursor,
  o: FollowOptions,
): Promise<AgentEvent | undefined> {
  const options = {
    follow: true,
    ...(c.operation !== undefined && { operation: c.operation }),
    ...(c.lastEventId !== undefined && { lastEventId: c.lastEventId }),
  };
  for await (const e of client.events(options)) {
    if (c.outage) o.onReconnected?.();
    c.outage = false;
    c.lastContact = Date.now();
    c.delay = firstDelayMs;
    c.operation ??= e.operationId;
    c.lastEventId = `${e.operationId}:${String(e.seq)}`;
    o.onEvent(e);
    if (e.kind === 'result' || (o.untilStaged === true && isStaged(e))) return e;
  }
  return undefined;
}

const isStaged = (e: AgentEvent): boolean => e.kind === 'phase' && e.phase === 'Staged';

function gaveUp(
  client: AgentClient,
  operation: string | undefined,
  ms: number,
  cause: MoltError,
): MoltError {
  const op = operation ?? 'the operation';
  return new MoltError(
    ErrorCode.TimedOut,
    `the agent at ${client.baseUrl} stayed unreachable for ${String(Math.round(ms / 1000))} s while following ${op}: ${cause.message}`,
    {
      cause,
      hint: `the machine may still be rebooting; run \`molt node events --follow${operation === undefined ? '' : ` --operation ${operation}`}\` again`,
    },
  );
}
