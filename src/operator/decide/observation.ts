// SPDX-License-Identifier: Apache-2.0
/**
 * What the operator last saw of each machine (docs/adr/0005 §4), and the planner's view of it.
 * A machine is available only when its agent answers, runs no operation (or holds one staged)
 * and boots its committed slot: anything else (rebooting, mid-upgrade, rolled back to a slot it has not committed,
 * unreachable) counts against the concurrency limits (DESIGN invariant 2).
 */
import type { Machine } from '../../core/rollout/types.ts';
import type { AgentStatus } from '../../protocol/agent.ts';
import type { Hold, MachineRecord } from '../ports/store.ts';
import { effectiveHold } from './holds.ts';

export interface Observation {
  /** Epoch ms of the look. */
  readonly at: number;
  /** The agent's answer, when it answered. */
  readonly status?: AgentStatus;
  /** Why it did not (code: message). */
  readonly error?: string;
  /**
   * When it did not answer: the first of the looks in a row without an answer, as this process
   * made them (a leader that just took over starts counting at its own first look).
   */
  readonly awaySince?: number;
}

/** `next` with its `awaySince`, given what was seen before it. */
export function withAwaySince(before: Observation | undefined, next: Observation): Observation {
  if (next.status !== undefined) return next;
  const away = before !== undefined && before.status === undefined;
  return { ...next, awaySince: away ? (before.awaySince ?? before.at) : next.at };
}

/** The release digest and version a machine boots, per its agent. */
export function booted(status: AgentStatus): { digest?: string; version?: string } {
  const slot = status.slots.find((s) => s.slot === status.bootedSlot);
  return {
    ...(slot?.digest != null && { digest: slot.digest }),
    ...(status.version !== null && { version: status.version }),
  };
}

/**
 * A staged upgrade (written, verified, not armed: docs/adr/0019) leaves the machine in service on
 * its committed slot, so it is available; staging itself (the pull and the write) is not.
 */
export function isAvailable(o: Observation | undefined): boolean {
  const s = o?.status;
  return (
    s !== undefined &&
    (s.phase === 'Idle' || s.phase === 'Staged') &&
    s.boot.committed === s.bootedSlot
  );
}

/** The planner's machine for a managed machine and what was seen of it. */
export function plannerMachine(
  record: MachineRecord,
  observation: Observation | undefined,
  hold: Hold | undefined,
): Machine {
  const b = observation?.status === undefined ? {} : booted(observation.status);
  const held = effectiveHold(hold, observation?.status?.hold);
  return {
    id: record.id,
    role: record.role,
    pool: record.pool,
    ...(record.cluster !== undefined && { cluster: record.cluster }),
    labels: record.labels,
    digest: b.digest,
    version: b.version,
    available: isAvailable(observation),
    ...(held !== undefined && { hold: held }),
    ...(hold?.version !== undefined && { pin: { version: hold.version, reason: hold.reason } }),
  };
}
