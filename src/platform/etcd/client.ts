// SPDX-License-Identifier: Apache-2.0
/**
 * etcd3 plumbing shared by the agent's etcd adapters (lease, membership) and the operator's (store,
 * leadership, FleetLock): clients, per-call deadlines, and the normalisation of etcd3's error
 * classes to molt codes (STYLE §4.4). Imported only by etcd adapters, so a daemon that does not
 * talk to etcd never loads etcd3.
 */
import { isBrokenCircuitError } from 'cockatiel';
import { Etcd3, GRPCDeadlineExceededError, GRPCUnavailableError, type IOptions } from 'etcd3';
import { ErrorCode, errorMessage, MoltError } from '../../core/errors.ts';
import { hostPolicy } from './host-policy.ts';

type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * etcd3's default global policy re-sends a call up to three times after a "recoverable" gRPC error
 * (unavailable, internal, …), including a transaction that etcd may already have applied; the
 * resent compare-and-swap then fails its compare, and the caller would take its own landed write
 * for a conflict and apply its change twice. The operator's store sends each call once and settles
 * unknown outcomes itself (`operator/adapters/etcd-store/cas.ts`). etcd3 only calls `execute` on
 * this policy.
 */
const sendOnce = {
  execute: <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> =>
    Promise.resolve(fn({ signal: new AbortController().signal })),
} as unknown as Policy;

/** Options of {@link openClient}. */
export interface OpenClientOptions {
  /** @default 2000 */
  readonly dialTimeoutMs?: number;
  /** Never let etcd3 re-send a failed call (see `sendOnce` above); the caller settles it. */
  readonly sendOnce?: boolean;
}

/** Open a client on `endpoints`; the caller closes it. */
export function openClient(endpoints: readonly string[], options: OpenClientOptions = {}): Etcd3 {
  return new Etcd3({
    hosts: [...endpoints],
    dialTimeout: options.dialTimeoutMs ?? 2_000,
    faultHandling: {
      host: () => hostPolicy(),
      ...(options.sendOnce === true && { global: sendOnce }),
    },
  });
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

/** Turns an etcd failure while doing `what` into a MoltError. */
export type ToMoltError = (e: unknown, what: string) => MoltError;

/** One daemon's etcd error normalisation; see {@link etcdErrors}. */
export interface EtcdErrors {
  readonly toMoltError: ToMoltError;
  /** Await `p`, normalising its failure with `toMoltError`. */
  readonly etcdCall: <T>(what: string, p: Promise<T>) => Promise<T>;
}

/**
 * Molt errors for etcd failures: a deadline becomes `MOLT_TIMED_OUT` (the write may still commit)
 * with `timeoutHint` (what the daemon's user should look at), anything else from etcd
 * `MOLT_ETCD_UNHEALTHY`, retryable when etcd was unavailable or no member's breaker let the call
 * through. MoltErrors pass through.
 */
export function etcdErrors(timeoutHint?: string): EtcdErrors {
  const toMoltError: ToMoltError = (e, what) => {
    if (e instanceof MoltError) return e;
    const detail = errorMessage(e);
    if (isTimeout(e))
      return new MoltError(ErrorCode.TimedOut, `etcd: ${what} timed out; its outcome is unknown`, {
        cause: e,
        retryable: true,
        ...(timeoutHint !== undefined && { hint: timeoutHint }),
      });
    return new MoltError(ErrorCode.EtcdUnhealthy, `etcd: ${what} failed: ${detail}`, {
      cause: e,
      // A refused breaker sent nothing: no member could take the call just now.
      retryable: e instanceof GRPCUnavailableError || isBrokenCircuitError(e),
    });
  };
  return {
    toMoltError,
    etcdCall: async (what, p) => {
      try {
        return await p;
      } catch (e) {
        throw toMoltError(e, what);
      }
    },
  };
}
