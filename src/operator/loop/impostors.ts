// SPDX-License-Identifier: Apache-2.0
/**
 * Machines whose endpoint leads to an agent presenting another machine's certificate
 * (`MOLT_AGENT_IDENTITY`, DESIGN invariant 8). The gateway already refuses to send them anything,
 * so such a machine is never started (it counts as unavailable, like a machine that is down); this
 * pass makes the refusal loud rather than a silent wait: one warning in the history and the log
 * when a machine starts failing the check (again after it passed), none on every pass after.
 * An in-flight machine's rollout is paused by the settling step (`reconcile.ts`).
 */
import { ErrorCode } from '../../core/errors.ts';
import type { Observation } from '../decide/observation.ts';
import { recordTransition, type TransitionSink } from '../transitions/record.ts';

/** True when the agent answered for another machine's certificate (the gateway sent it nothing). */
export const isIdentityRefusal = (o: Observation | undefined): boolean =>
  o?.error?.startsWith(`${ErrorCode.AgentIdentity}:`) === true;

/**
 * Warn once per machine that starts failing the identity check; `warned` (kept across passes)
 * forgets a machine once its agent answers as itself again.
 */
export async function warnImpostors(
  d: TransitionSink,
  observations: ReadonlyMap<string, Observation>,
  warned: Set<string>,
): Promise<void> {
  for (const [machine, o] of observations) {
    if (!isIdentityRefusal(o)) {
      warned.delete(machine);
      continue;
    }
    if (warned.has(machine)) continue;
    warned.add(machine);
    const message = `${machine}: ${o.error ?? ''}`;
    await recordTransition(d, {
      write: () => Promise.resolve(),
      record: { log: message, event: { kind: 'warning', machine, message } },
    });
  }
}
