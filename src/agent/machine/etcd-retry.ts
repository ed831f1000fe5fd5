// SPDX-License-Identifier: Apache-2.0
/** The etcd steps of an upgrade before anything on the machine changed, outlasting a slow member. */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { MachinePorts } from './ports.ts';

/** How often an etcd step before any disruption is tried: its first try and two more. */
export const EtcdStepAttempts = 3;

/**
 * An etcd step before anything on the machine changed, tried again on a retryable failure (a
 * timed-out request, an unavailable member) after 2 s, then 4 s: a member that answers slowly for
 * a few seconds — a busy machine, a leader election — must not fail the machine and halt its
 * rollout. Both steps are idempotent (the lease adopts our own key). A lease another machine
 * holds is not waited for here: the operator waits for it.
 */
export async function etcdBeforeDisruption<T>(
  p: MachinePorts,
  ctx: { log(message: string): void; readonly signal?: AbortSignal | undefined },
  what: string,
  step: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (e) {
      const again =
        e instanceof MoltError &&
        e.retryable &&
        e.code !== ErrorCode.LeaseHeld &&
        attempt < EtcdStepAttempts;
      if (!again) throw e;
      ctx.log(
        `${what}: ${e.message}; trying again (${String(attempt + 1)} of ${String(EtcdStepAttempts)})`,
      );
      await p.clock.sleep(2_000 * attempt, ctx.signal);
    }
  }
}
