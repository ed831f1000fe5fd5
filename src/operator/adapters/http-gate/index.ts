// SPDX-License-Identifier: Apache-2.0
/**
 * {@link GateProbe} by HTTP GET: the gate passes when the answer has the expected status (200 by
 * default) within its timeout (5 s by default). Redirects are not followed — a gate that moved is
 * a configuration to fix, not a pass — and the body is never read beyond what closes the request.
 */
import { fetch } from 'undici';
import type { GateProbe } from '../../ports/gates.ts';
import { errorMessage } from '../../../core/errors.ts';

export function createHttpGateProbe(): GateProbe {
  return {
    async check(gate) {
      const expected = gate.expectStatus ?? 200;
      try {
        const res = await fetch(gate.url, {
          redirect: 'manual',
          signal: AbortSignal.timeout(gate.timeoutMs ?? 5_000),
        });
        await res.body?.cancel();
        const ok = res.status === expected;
        return {
          ok,
          message: `HTTP ${String(res.status)}${ok ? '' : ` (expected ${String(expected)})`}`,
        };
      } catch (e) {
        const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
        return { ok: false, message: `${errorMessage(e)}${cause}` };
      }
    },
  };
}
