// SPDX-License-Identifier: Apache-2.0
/**
 * The history's head and the notification sinks' cursors in etcd (docs/adr/0009): the head is the
 * `history-seq` counter `history.ts` advances; a cursor is one key per sink, moved forward only by
 * a compare-and-swap on its mod revision, so two operators writing at once (a deposed leader's
 * late write, the new leader's) leave the higher seq, never the lower.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { Conflict, commit, get, retrying, type StoreCtx } from './cas.ts';
import { decode } from './codec.ts';

/** The last history seq handed out; 0 before the first. */
export async function historyHead(ctx: StoreCtx): Promise<number> {
  const kv = await get(ctx, ctx.keys.historySeq);
  return kv === undefined ? 0 : decode('seq', kv.key, kv.value);
}

export async function notifyCursor(ctx: StoreCtx, sink: string): Promise<number | undefined> {
  const kv = await get(ctx, ctx.keys.notifyCursor(sink));
  return kv === undefined ? undefined : decode('seq', kv.key, kv.value);
}

export async function advanceNotifyCursor(ctx: StoreCtx, sink: string, seq: number): Promise<void> {
  if (!Number.isSafeInteger(seq) || seq < 0)
    throw new MoltError(ErrorCode.BadInput, `a notification cursor must be a seq, not ${seq}`);
  const key = ctx.keys.notifyCursor(sink);
  const what = `advancing the notification cursor of ${sink}`;
  await retrying(ctx, what, async () => {
    const kv = await get(ctx, key);
    if (kv !== undefined && decode('seq', kv.key, kv.value) >= seq) return undefined;
    const outcome = await commit(ctx, {
      what,
      guard: key,
      modRevision: kv?.modRevision ?? '0',
      current: kv?.value,
      puts: [{ key, value: String(seq) }],
    });
    return outcome === 'written' ? undefined : Conflict;
  });
}
