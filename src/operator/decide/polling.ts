// SPDX-License-Identifier: Apache-2.0
/**
 * Which agents a reconcile pass asks for their status (docs/adr/0005 §4, "Polling what needs
 * polling"). The operator follows every agent's event stream, so an agent whose stream is open
 * and quiet has not changed since it was last asked: its previous observation is kept, with its
 * original `at`. Asked each pass: machines in flight in any rollout, machines never observed or
 * whose last look failed or found them busy (not available), machines whose stream reported
 * something since they were last asked or is not open, and machines whose last observation is
 * older than their resync period. The period is spread per machine over [resync/2, resync) by a
 * hash of its id, so a fleet first observed in one pass does not fall due in one pass again.
 */
import type { Rollout } from '../../core/rollout/types.ts';
import { isAvailable, type Observation } from './observation.ts';

/** What the operator knows of a machine's event stream. */
export interface StreamState {
  /** The stream is connected now (its last connection answered and has not ended). */
  readonly open: boolean;
  /** How many changes it reported so far (events that matter, losses, reconnections). */
  readonly changes: number;
}

export interface PollInput {
  readonly machines: readonly string[];
  readonly rollouts: readonly Rollout[];
  /** The last observation of each machine (carried over from earlier passes). */
  readonly previous: ReadonlyMap<string, Observation>;
  /** The stream's change count when each machine was last asked. */
  readonly askedAt: ReadonlyMap<string, number>;
  /** Each machine's stream; undefined (no watch, or not followed): always asked. */
  readonly stream: (machine: string) => StreamState | undefined;
  readonly now: number;
  /** The longest a quiet machine goes unasked. */
  readonly resyncMs: number;
}

/** A stable fraction in [0, 1) per machine id (FNV-1a), to spread resyncs. */
export function spread(machine: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < machine.length; k++) h = Math.imul(h ^ machine.charCodeAt(k), 0x01000193);
  return (h >>> 0) / 2 ** 32;
}

/** How long `machine`'s observation may be kept at most: in [resync/2, resync). */
export const resyncPeriod = (machine: string, resyncMs: number): number =>
  resyncMs * (0.5 + spread(machine) / 2);

/** The machines to ask this pass (a subset of `machines`). */
export function machinesToPoll(i: PollInput): Set<string> {
  const inFlight = new Set<string>();
  for (const r of i.rollouts)
    for (const [id, p] of Object.entries(r.machines)) if (p.phase === 'InFlight') inFlight.add(id);
  const due = (id: string): boolean => {
    if (inFlight.has(id)) return true;
    const o = i.previous.get(id);
    if (o?.status === undefined || !isAvailable(o)) return true;
    const s = i.stream(id);
    if (s?.open !== true || s.changes !== i.askedAt.get(id)) return true;
    return i.now - o.at >= resyncPeriod(id, i.resyncMs);
  };
  return new Set(i.machines.filter(due));
}

/**
 * The machines a plan would start whose status was not asked this pass: asked before any start,
 * so a start never rests on a kept observation (the plan is then made again).
 */
export function startsToConfirm(
  decisions: readonly { readonly action: string; readonly machine: string }[],
  asked: ReadonlySet<string>,
): string[] {
  const ids = decisions.filter((d) => d.action === 'start' && !asked.has(d.machine));
  return [...new Set(ids.map((d) => d.machine))];
}
