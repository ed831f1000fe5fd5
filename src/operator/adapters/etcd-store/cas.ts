// SPDX-License-Identifier: Apache-2.0
/**
 * Reads and compare-and-swap writes of the etcd operator store (STYLE §7: read → pure change →
 * compare-and-swap on the mod revision), and how a write whose answer never came is settled.
 *
 * A transaction that misses its deadline (or whose connection drops) may still commit later: etcd
 * 3.4 keeps the proposal in the raft log. So an unknown outcome is never taken for "not written":
 * 1. a linearizable re-read of the write's proof key says whether it landed;
 * 2. if not, the guard key is *fenced*: re-put unchanged, compared on the same mod revision. If the
 *    fence commits, the lost write can never commit any more (its compare would fail), so the
 *    caller may re-read and try again; if the fence loses, something moved the guard and the
 *    outcome is reported as `MOLT_TIMED_OUT`, as it is when etcd cannot be reached to settle it
 *    (after a few tries: one member down must not fail a write the others can take).
 */
import {
  DelegateBackoff,
  ExponentialBackoff,
  handleWhen,
  handleWhenResult,
  noJitterGenerator,
  retry,
} from 'cockatiel';
import type { Etcd3 } from 'etcd3';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { deadline } from '../../../platform/etcd/client.ts';
import { etcdCall, toMoltError } from './errors.ts';
import type { Layout } from './layout.ts';

/** One store instance: its client and limits. */
export interface StoreCtx {
  readonly client: Etcd3;
  readonly keys: Layout;
  readonly timeoutMs: number;
  /** How many lost compare-and-swap races one call tolerates before giving up. */
  readonly maxAttempts: number;
}

/** A key as read: its bytes and the revision of its last write. */
export interface Current {
  readonly key: string;
  readonly value: Buffer;
  readonly modRevision: string;
}

interface Kv {
  readonly key: Buffer;
  readonly value: Buffer;
  readonly mod_revision: string;
}

const toCurrent = (kv: Kv): Current => ({
  key: kv.key.toString(),
  value: kv.value,
  modRevision: kv.mod_revision,
});

/** 25 ms before the second try, doubling to 200: a member that is down refuses at once. */
const quickBackoff = (): ExponentialBackoff<unknown> =>
  new ExponentialBackoff({ initialDelay: 25, maxDelay: 200, generator: noJitterGenerator });

/**
 * Run a read, sending it again while etcd was unreachable, for up to one request deadline: reads
 * have no side effects, and the client sends each call only once (`sendOnce`,
 * `platform/etcd/client.ts`) to a member it picks at random, so without this a read that dialled a
 * member being upgraded would fail although the other members serve it.
 */
export function reading<T>(ctx: StoreCtx, what: string, call: () => Promise<T>): Promise<T> {
  const until = performance.now() + ctx.timeoutMs;
  return retry(
    handleWhen((e) => isUnreachable(e) && performance.now() < until),
    { backoff: quickBackoff() },
  ).execute(() => etcdCall(what, call()));
}

const isUnreachable = (e: unknown): boolean =>
  e instanceof MoltError && e.code === ErrorCode.EtcdUnhealthy && e.retryable;

/** Linearizable read of one key. */
export async function get(ctx: StoreCtx, key: string): Promise<Current | undefined> {
  const res = await reading(ctx, `reading ${key}`, () =>
    ctx.client.get(key).options(deadline(ctx.timeoutMs)).exec(),
  );
  const kv = res.kvs[0];
  return kv === undefined ? undefined : toCurrent(kv);
}

/** The keys in `[from, to)`, in key order, at most `limit` (0: all). */
export async function range(
  ctx: StoreCtx,
  r: { readonly from: string; readonly to: string; readonly limit?: number },
): Promise<Current[]> {
  const res = await reading(ctx, `reading ${r.from}…`, () =>
    ctx.client.kv.range(
      {
        key: Buffer.from(r.from),
        range_end: Buffer.from(r.to),
        limit: r.limit ?? 0,
        sort_order: 'Ascend',
        sort_target: 'Key',
      },
      deadline(ctx.timeoutMs),
    ),
  );
  return res.kvs.map(toCurrent);
}

/** Several prefixes read in one transaction, so all at the same revision. */
export async function readPrefixes(
  ctx: StoreCtx,
  prefixes: readonly string[],
): Promise<Current[][]> {
  const res = await reading(ctx, 'reading the operator store', () =>
    ctx.client.kv.txn(
      {
        compare: [],
        success: prefixes.map((p) => ({
          request_range: { key: Buffer.from(p), range_end: prefixEnd(p) },
        })),
      },
      deadline(ctx.timeoutMs),
    ),
  );
  return res.responses.map((r) => r.response_range.kvs.map(toCurrent));
}

/** The first key after every key starting with `prefix` (its last byte plus one). */
export function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
  return end;
}

export interface Put {
  readonly key: string;
  readonly value: string;
}

/** A write applied only while `guard` is still at `modRevision`. */
export interface CasWrite {
  /** What the write does, for messages ("updating rollout r1"). */
  readonly what: string;
  readonly guard: string;
  /** The guard's mod revision when read; '0' when it was absent (the write creates it). */
  readonly modRevision: string;
  /** The guard's bytes when read, to fence it after an unknown outcome (absent: no fence). */
  readonly current: Buffer | undefined;
  readonly puts: readonly Put[];
  /** The put whose read-back proves the write landed. @default puts[0] */
  readonly proof?: Put;
}

export type CasOutcome = 'written' | 'conflict';

/** Commit `w`; `conflict` when the guard moved (the caller re-reads and tries again). */
export async function commit(ctx: StoreCtx, w: CasWrite): Promise<CasOutcome> {
  try {
    const res = await ctx.client
      .if(w.guard, 'Mod', '==', w.modRevision)
      .then(...w.puts.map((p) => ctx.client.put(p.key).value(p.value)))
      .options(deadline(ctx.timeoutMs))
      .commit();
    return res.succeeded ? 'written' : 'conflict';
  } catch (e) {
    return settle(ctx, w, toMoltError(e, w.what));
  }
}

/**
 * After a write failed without an answer: written, safely not written (`conflict`), or throw. A
 * re-read or fence that cannot reach etcd is tried again for one request deadline, as reads are:
 * each try may dial another member, and a write refused by a member that is down (a control-plane
 * machine rebooting) must not fail while the others serve.
 */
async function settle(ctx: StoreCtx, w: CasWrite, failure: MoltError): Promise<CasOutcome> {
  if (!failure.retryable) throw failure; // etcd refused the request itself: nothing was written
  const until = performance.now() + ctx.timeoutMs;
  // Settled, or undefined: the guard moved, and not by this write (its outcome stays unknown).
  const settled = await retry(
    // etcd cannot answer the re-read or the fence (yet): try again while the deadline lasts.
    handleWhen(() => performance.now() < until),
    { backoff: quickBackoff() },
  )
    .execute(async (): Promise<CasOutcome | undefined> => {
      if (await landed(ctx, w)) return 'written';
      if (await fence(ctx, w)) return 'conflict';
      return (await landed(ctx, w)) ? 'written' : undefined;
    })
    .catch(() => undefined);
  if (settled === undefined) throw failure;
  return settled;
}

async function landed(ctx: StoreCtx, w: CasWrite): Promise<boolean> {
  const proof = w.proof ?? w.puts[0];
  if (proof === undefined) return false;
  const now = await get(ctx, proof.key);
  return now !== undefined && now.value.toString() === proof.value;
}

/** Re-put the guard unchanged if it did not move; true when that commits. */
async function fence(ctx: StoreCtx, w: CasWrite): Promise<boolean> {
  if (w.current === undefined) return false;
  const res = await ctx.client
    .if(w.guard, 'Mod', '==', w.modRevision)
    .then(ctx.client.put(w.guard).value(w.current))
    .options(deadline(ctx.timeoutMs))
    .commit();
  return res.succeeded;
}

/** Returned by an attempt that lost a compare-and-swap race. */
export const Conflict: unique symbol = Symbol('conflict');

/**
 * Run `attempt` (read → change → compare-and-swap) until it does not return {@link Conflict}, at
 * most `ctx.maxAttempts` times, with a short random pause so racing writers spread out.
 */
export async function retrying<T>(
  ctx: StoreCtx,
  what: string,
  attempt: () => Promise<T | typeof Conflict>,
): Promise<T> {
  const result = await retry(
    handleWhenResult((r) => r === Conflict),
    {
      maxAttempts: ctx.maxAttempts - 1,
      backoff: new DelegateBackoff(({ attempt: n }) => Math.random() * Math.min(50, 2 * n)),
    },
  ).execute(attempt);
  if (result !== Conflict) return result;
  throw new MoltError(
    ErrorCode.EtcdUnhealthy,
    `etcd: ${what} lost ${ctx.maxAttempts} compare-and-swap races in a row`,
    { retryable: true, hint: 'another writer keeps changing the same key; try again' },
  );
}
