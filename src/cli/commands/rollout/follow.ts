// SPDX-License-Identifier: Apache-2.0
/**
 * `molt rollout status ID --follow`: the rollout's history, then new events as the operator
 * records them, with a progress line whenever its machine counts change, until it completes or
 * halts. The operator going away (a restart, a failover) is waited out: the stream resumes after
 * the last seq seen, so nothing is printed twice or lost.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ErrorCode,
  MoltError,
  isEnded,
  isMoltError,
  type HistoryEventView,
  type OperatorClient,
  type RolloutView,
} from '../../../protocol/index.ts';

/** Options of {@link followRollout}. */
export interface FollowRolloutOptions {
  readonly reconnectTimeoutMs: number;
  readonly onEvent: (e: HistoryEventView) => void;
  /** The rollout whenever its state or counts changed (and once at the start). */
  readonly onProgress: (r: RolloutView) => void;
  readonly onOutage?: (e: MoltError) => void;
}

const isFinal = (r: RolloutView): boolean => r.state === 'Halted' || isEnded(r.state);
const key = (r: RolloutView): string => `${r.state} ${JSON.stringify(r.counts)}`;

/**
 * The operator writes a rollout's new state, then its `rollout-state` event: a follower that sees
 * the final state first waits this long for the event, so the stream never ends without it.
 */
const FinalEventGraceMs = 5_000;

/** Kinds after which the rollout's counts or state may have changed. */
const moving = new Set(['machine-start', 'machine-result', 'machine-rollback', 'rollout-state']);

interface Cursor {
  after: number;
  shown: string;
  lastContact: number;
  outage: boolean;
}

/** Follow until the rollout is Completed or Halted; returns it then. */
export async function followRollout(
  client: OperatorClient,
  id: string,
  o: FollowRolloutOptions,
): Promise<RolloutView> {
  const first = await client.rollout(id);
  const c: Cursor = { after: 0, shown: key(first), lastContact: Date.now(), outage: false };
  o.onProgress(first);
  if (isFinal(first)) return first;
  for (;;) {
    try {
      const done = await followOnce(client, id, c, o);
      if (done !== undefined) return done;
      throw new MoltError(ErrorCode.OperatorUnreachable, 'the operator closed the event stream', {
        retryable: true,
      });
    } catch (e) {
      if (!isMoltError(e) || !e.retryable) throw e;
      if (!c.outage) o.onOutage?.(e);
      c.outage = true;
      if (Date.now() - c.lastContact > o.reconnectTimeoutMs)
        throw new MoltError(
          ErrorCode.TimedOut,
          `lost the operator while following ${id}: ${e.message}`,
          {
            cause: e,
            hint: `run \`molt rollout status ${id} --follow\` again`,
          },
        );
    }
    await sleep(500);
  }
}

async function followOnce(
  client: OperatorClient,
  id: string,
  c: Cursor,
  o: FollowRolloutOptions,
): Promise<RolloutView | undefined> {
  for await (const e of client.events({ follow: true, rollout: id, after: c.after })) {
    c.outage = false;
    c.lastContact = Date.now();
    c.after = e.seq;
    o.onEvent(e);
    if (!moving.has(e.kind)) continue;
    const r = await client.rollout(id);
    if (isFinal(r) && e.kind !== 'rollout-state') await untilFinalEvent(client, id, c, o);
    if (key(r) !== c.shown) o.onProgress(r);
    c.shown = key(r);
    if (isFinal(r)) return r;
  }
  return undefined;
}

/** Print the events recorded after the cursor until the `rollout-state` one (or the grace ends). */
async function untilFinalEvent(
  client: OperatorClient,
  id: string,
  c: Cursor,
  o: FollowRolloutOptions,
): Promise<void> {
  const until = Date.now() + FinalEventGraceMs;
  for (;;) {
    const rest = await client.history({ after: c.after, rollout: id });
    for (const e of rest) {
      c.after = e.seq;
      o.onEvent(e);
    }
    if (rest.some((e) => e.kind === 'rollout-state') || Date.now() > until) return;
    await sleep(200); // a poll interval under the grace: the event is one write away
  }
}
