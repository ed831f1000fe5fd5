// SPDX-License-Identifier: Apache-2.0
/**
 * The first control-plane machine's bootstrap of its cluster (docs/adr/0018 §3), run beside the
 * agent once it has started: tried until it succeeds — the API server it needs starts with the
 * machine's services and may take minutes under load — then recorded, so later starts skip it.
 * A failure is logged when its message changes (not at every try), and the wait between tries
 * doubles up to a bound, so a bootstrap that cannot succeed (a bad token file) costs little.
 */
import type { Clock } from '../ports/clock.ts';
import type { ClusterBootstrap, ClusterBootstrapOutcome } from '../ports/cluster-bootstrap.ts';
import { errorMessage } from '../../core/errors.ts';

export interface ClusterBootstrapRecord {
  /** Whether a bootstrap already succeeded on this machine. */
  done(): Promise<boolean>;
  /** Record a success (written atomically; what it did, for a person reading STATE). */
  mark(outcome: ClusterBootstrapOutcome, at: Date): Promise<void>;
}

export interface ClusterBootstrapLoopDeps {
  readonly bootstrap: ClusterBootstrap;
  readonly record: ClusterBootstrapRecord;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  /** The first wait after a failure. @default 5000 */
  readonly retryMs?: number;
  /** The longest wait between tries. @default 60000 */
  readonly maxRetryMs?: number;
}

export type ClusterBootstrapEnd = 'done' | 'already' | 'stopped';

export interface ClusterBootstrapLoop {
  /** How the loop ended. */
  readonly ended: Promise<ClusterBootstrapEnd>;
  /** Stop trying (at the agent's shutdown); resolves when the loop has ended. */
  stop(): Promise<ClusterBootstrapEnd>;
}

export function startClusterBootstrap(d: ClusterBootstrapLoopDeps): ClusterBootstrapLoop {
  const abort = new AbortController();
  const max = d.maxRetryMs ?? 60_000;
  const loop = async (): Promise<ClusterBootstrapEnd> => {
    if (await d.record.done()) return 'already';
    let wait = d.retryMs ?? 5_000;
    let last = '';
    for (let attempt = 1; !abort.signal.aborted; attempt++) {
      try {
        const at = new Date(d.clock.now());
        const outcome = await d.bootstrap.run(at);
        await d.record.mark(outcome, at);
        d.log(
          `cluster bootstrap: done (${String(outcome.rbac.length)} RBAC objects applied, bootstrap token ${outcome.token}, attempt ${String(attempt)})`,
        );
        return 'done';
      } catch (e) {
        if (errorMessage(e) !== last)
          d.log(
            `cluster bootstrap: attempt ${String(attempt)} failed, trying again: ${errorMessage(e)}`,
          );
        last = errorMessage(e);
      }
      await d.clock.sleep(wait, abort.signal).catch(() => undefined);
      wait = Math.min(wait * 2, max);
    }
    return 'stopped';
  };
  const ended = loop();
  return {
    ended,
    stop() {
      abort.abort();
      return ended;
    },
  };
}
