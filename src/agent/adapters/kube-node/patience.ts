// SPDX-License-Identifier: Apache-2.0
/** Calls to the API server that wait it out while it is away, up to a deadline. */
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';

/**
 * `f`, retried while the API server is away (MOLT_KUBE_UNAVAILABLE: refused, reset, 5xx) until
 * `deadline` (epoch ms) — a control-plane upgrade or an API server restart must not fail a drain
 * that would finish a few seconds later. Anything else (RBAC, a missing node) fails at once. The
 * wait between tries doubles from `pollMs` up to 5 s; each retry is logged.
 */
export async function outlasting<T>(
  deadline: number,
  f: () => Promise<T>,
  o: { readonly pollMs: number; readonly log: (line: string) => void },
): Promise<T> {
  for (let wait = o.pollMs; ; wait = Math.min(wait * 2, 5_000)) {
    try {
      return await f();
    } catch (e) {
      if (
        !isMoltError(e, ErrorCode.KubeUnavailable) ||
        !e.retryable ||
        Date.now() + wait > deadline
      )
        throw e;
      o.log(`the API server is not answering (${e.message}); retrying`);
    }
    await sleep(wait);
  }
}
