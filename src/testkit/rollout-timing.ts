// SPDX-License-Identifier: Apache-2.0
/** When machines ran in a rollout, for tests and benchmarks that check how many ran at once. */
import type { Rollout, StartRecord } from '../core/rollout/types.ts';

/** When machine `id` ran in `rollout`: [started, finished] (epoch ms). */
export function ranAt(rollout: Rollout, id: string): [number, number] {
  const p = rollout.machines[id];
  if (p?.startedAt === undefined || p.finishedAt === undefined)
    throw new Error(`${id} did not run to an end in ${rollout.id}: ${JSON.stringify(p)}`);
  return [p.startedAt, p.finishedAt];
}

/** The most intervals that overlap at any instant. */
export function maxOverlap(intervals: readonly (readonly [number, number])[]): number {
  const edges = intervals.flatMap(([s, e]) => [[s, 1] as const, [e, -1] as const]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (now += d));
  return most;
}

/** How many start records each `rollout/machine` has: an operator starts a machine once. */
export function startsPerMachine(starts: readonly StartRecord[]): Map<string, number> {
  const count = new Map<string, number>();
  for (const s of starts)
    count.set(`${s.rollout}/${s.machine}`, (count.get(`${s.rollout}/${s.machine}`) ?? 0) + 1);
  return count;
}
