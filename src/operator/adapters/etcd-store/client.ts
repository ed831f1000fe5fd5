// SPDX-License-Identifier: Apache-2.0
/**
 * etcd3 plumbing for the operator's etcd adapters (store and leadership): per-call deadlines and
 * the normalisation of etcd3's errors to molt codes (STYLE §4.4). The agent has the same helpers in
 * `agent/adapters/etcd/client.ts`; agent and operator never import each other (STYLE §2), so the
 * few lines live here again.
 */
import { Etcd3, GRPCDeadlineExceededError, GRPCUnavailableError, type IOptions } from 'etcd3';
import { ErrorCode, MoltError } from '../../../core/errors.ts';

type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * etcd3's default global policy re-sends a call up to three times after a "recoverable" gRPC error
 * (unavailable, internal, …), including a transaction that etcd may already have applied; the
 * resent compare-and-swap then fails its compare, and the caller would take its own landed write
 * for a conflict and apply its change twice. The store's client sends each call once and settles
 * unknown outcomes itself (`cas.ts`). etcd3 only calls `execute` on this policy.
 */
const sendOnce = {
  execute: <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> =>
    Promise.resolve(fn({ signal: new AbortController().signal })),
} as unknown as Policy;

/**
 * Open a client on `endpoints`; the caller closes it. With `sendOnce`, failed calls are not
 * re-sent by etcd3 (see above); the caller retries reads and settles writes.
 */
export function openClient(
  endpoints: readonly string[],
  options: { readonly dialTimeoutMs?: number; readonly sendOnce?: boolean } = {},
): Etcd3 {
  return new Etcd3({
    hosts: [...endpoints],
    dialTimeout: options.dialTimeoutMs ?? 2_000,
    ...(options.sendOnce === true && { faultHandling: { global: sendOnce } }),
  });
}

/** gRPC call options with a deadline `ms` from now. */
export function deadline(ms: number): { readonly deadline: number } {
  return { deadline: Date.now() + ms };
}

/** True when `e` is a request that ran out of time: its outcome is unknown, not failed. */
export function isTimeout(e: unknown): boolean {
  return (
    e instanceof GRPCDeadlineExceededError ||
    (e instanceof MoltError && e.code === ErrorCode.TimedOut)
  );
}

/**
 * A molt error for an etcd failure while doing `what`: a deadline becomes `MOLT_TIMED_OUT` (the
 * write may still commit), anything else from etcd `MOLT_ETCD_UNHEALTHY`. MoltErrors pass through.
 */
export function toMoltError(e: unknown, what: string): MoltError {
  if (e instanceof MoltError) return e;
  const detail = e instanceof Error ? e.message : String(e);
  if (isTimeout(e))
    return new MoltError(ErrorCode.TimedOut, `etcd: ${what} timed out; its outcome is unknown`, {
      cause: e,
      retryable: true,
      hint: 'etcd may have lost quorum; the next reconcile re-reads the store',
    });
  return new MoltError(ErrorCode.EtcdUnhealthy, `etcd: ${what} failed: ${detail}`, {
    cause: e,
    retryable: e instanceof GRPCUnavailableError,
  });
}

/** Await `p`, normalising its failure with {@link toMoltError}. */
export async function etcdCall<T>(what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw toMoltError(e, what);
  }
}
