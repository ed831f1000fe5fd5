// SPDX-License-Identifier: Apache-2.0
/**
 * The circuit breaker etcd3 puts in front of each member (its `faultHandling.host`), bounded in
 * time. cockatiel's breaker, half-open, sends one test call and makes every other caller await that
 * call's outcome: a test call that never settles (a member that accepted the connection and then
 * stopped answering, on a host starved of CPU) would hold every later call to that member for
 * good, the leader's renewals included, with nothing failing and nothing logged. Here:
 * - a caller waits for a test at most `halfOpenWaitMs`, then is refused as by an open breaker
 *   (etcd3 then tries another member) — and its call is never sent later, so a refused write is
 *   surely not written;
 * - a test still unanswered after `testBoundMs` counts as lost: the breaker is replaced by a
 *   closed one, so the member is tried again instead of being skipped for ever.
 * Both bounds only ever turn a wait into a prompt failure the callers already handle (a member
 * that is down).
 */
import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitState,
  ConsecutiveBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
  type IDefaultPolicyContext,
  type IPolicy,
} from 'cockatiel';
import { isRecoverableError } from 'etcd3';

export interface HostPolicyOptions {
  /** After three failures in a row, skip the member this long. @default 1000 */
  readonly halfOpenAfterMs?: number;
  /** How long a call waits for another's test of the member. @default 2000 */
  readonly halfOpenWaitMs?: number;
  /** How long a test may go unanswered before the member is tried afresh. @default 30000 */
  readonly testBoundMs?: number;
}

/**
 * Per member: after three failures in a row, skip that member for one second (etcd's election
 * timeout), then try it again. etcd3's default skips it for five: while one member restarts and
 * the others briefly answer "leader changed", every member's breaker can open at once, and the
 * client then refuses every call for five seconds although the cluster has a leader again within
 * one — long enough for a lease with a short TTL to lapse.
 */
export function hostPolicy(o: HostPolicyOptions = {}): IPolicy {
  const halfOpenWaitMs = o.halfOpenWaitMs ?? 2_000;
  const testBoundMs = o.testBoundMs ?? 30_000;
  const fresh = (): { breaker: CircuitBreakerPolicy; halfOpenSince: number | undefined } => {
    const breaker = circuitBreaker(handleWhen(isRecoverableError), {
      halfOpenAfter: o.halfOpenAfterMs ?? 1_000,
      breaker: new ConsecutiveBreaker(3),
    });
    const b = { breaker, halfOpenSince: undefined as number | undefined };
    breaker.onStateChange((state) => {
      b.halfOpenSince = state === CircuitState.HalfOpen ? performance.now() : undefined;
    });
    return b;
  };
  let b = fresh();
  const execute = async <T>(
    fn: (context: IDefaultPolicyContext) => PromiseLike<T> | T,
    signal?: AbortSignal,
  ): Promise<T> => {
    if (b.halfOpenSince !== undefined && performance.now() - b.halfOpenSince > testBoundMs)
      b = fresh();
    if (b.breaker.state !== CircuitState.HalfOpen) return b.breaker.execute(fn, signal);
    // Waiting for the test: give up only while this call is not sent yet. Once sent, its own
    // deadline bounds it, and failing it early would hide a write that may still land.
    let call: 'waiting' | 'sent' | 'abandoned' = 'waiting';
    const waited = b.breaker.execute((context) => {
      if (call === 'abandoned') throw new BrokenCircuitError();
      call = 'sent';
      return fn(context);
    }, signal);
    void waited.catch(noop);
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        if (call !== 'waiting') return;
        call = 'abandoned';
        reject(new BrokenCircuitError());
      }, halfOpenWaitMs);
    });
    try {
      return await Promise.race([waited, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    execute,
    get onSuccess() {
      return b.breaker.onSuccess;
    },
    get onFailure() {
      return b.breaker.onFailure;
    },
  } as IPolicy;
}

const noop = (): void => undefined;
