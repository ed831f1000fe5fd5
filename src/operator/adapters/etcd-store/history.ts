// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's history in etcd: one key per event, `history/<seq>`, the seq handed out by a
 * counter key (`history-seq`) advanced in the same compare-and-swap transaction as the event's
 * put. Two appenders can never get the same seq (one of them loses the race on the counter and
 * retries), and seqs never go back: the counter is never deleted.
 */
import { Conflict, commit, get, prefixEnd, range, retrying, type StoreCtx } from './cas.ts';
import { decode, encode } from './codec.ts';
import type { HistoryEvent } from './layout.ts';
import type { NewHistoryEvent } from '../../ports/store.ts';

export function appendHistory(ctx: StoreCtx, event: NewHistoryEvent): Promise<HistoryEvent> {
  const what = 'appending to the history';
  const counter = ctx.keys.historySeq;
  return retrying(ctx, what, async () => {
    const kv = await get(ctx, counter);
    const seq = (kv === undefined ? 0 : decode('seq', kv.key, kv.value)) + 1;
    const stored: HistoryEvent = { seq, ...event };
    const proof = { key: ctx.keys.historyAt(seq), value: encode(stored) };
    const outcome = await commit(ctx, {
      what,
      guard: counter,
      modRevision: kv?.modRevision ?? '0',
      current: kv?.value,
      puts: [{ key: counter, value: String(seq) }, proof],
      proof,
    });
    return outcome === 'written' ? stored : Conflict;
  });
}

/** Events after `afterSeq`, oldest first, at most `limit`: one range read in key (= seq) order. */
export async function history(
  ctx: StoreCtx,
  options: { afterSeq?: number; limit?: number } = {},
): Promise<HistoryEvent[]> {
  const { afterSeq, limit } = options;
  if (limit !== undefined && limit <= 0) return [];
  const from =
    afterSeq === undefined
      ? ctx.keys.history
      : ctx.keys.historyAt(Math.max(0, Math.floor(afterSeq)) + 1);
  const kvs = await range(ctx, {
    from,
    to: prefixEnd(ctx.keys.history).toString(),
    ...(limit !== undefined && { limit: Math.floor(limit) }),
  });
  return kvs.map((kv) => decode('history', kv.key, kv.value));
}
