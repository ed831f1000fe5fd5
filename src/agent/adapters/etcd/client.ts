// SPDX-License-Identifier: Apache-2.0
/**
 * etcd3 client plumbing shared by the lease and member adapters: short-lived clients, per-call
 * deadlines, and the normalisation of etcd3's error classes to molt codes (STYLE §4.4).
 */
import { Etcd3, GRPCDeadlineExceededError, GRPCUnavailableError } from 'etcd3';
import { ErrorCode, MoltError } from '../../../core/errors.ts';

/** Options shared by the etcd adapters. */
export interface EtcdClientOptions {
  /** Client URLs (`http://host:port`). */
  readonly endpoints: readonly string[];
  /** Deadline of one etcd request. @default 5000 */
  readonly requestTimeoutMs?: number;
}

/** Open a client on `endpoints`; the caller closes it. */
export function openClient(endpoints: readonly string[], dialTimeoutMs = 2_000): Etcd3 {
  return new Etcd3({ hosts: [...endpoints], dialTimeout: dialTimeoutMs });
}

/** Run `fn` with a client on `endpoints`, closing it afterwards. */
export async function withClient<T>(
  endpoints: readonly string[],
  fn: (client: Etcd3) => Promise<T>,
): Promise<T> {
  const client = openClient(endpoints);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
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
      hint: 'etcd may have lost quorum; check `molt node status` of the control-plane machines',
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
