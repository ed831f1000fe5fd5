// SPDX-License-Identifier: Apache-2.0
/**
 * Rollouts of the Kubernetes store (docs/adr/0016): one record per rollout, holding the rollout
 * AND the start records of its machines, `{rollout, starts}`. That is what makes `recordStart`
 * one atomic write, as the port demands: the start record and the machine's `InFlight` progress
 * land in the same replace of the same object, guarded by its resourceVersion, or neither does.
 * `read()` gathers every rollout's starts from the same list, so it never sees one without the
 * other. A rollout starts each machine at most once, so its starts are bounded by its machines.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { MachineProgress, Rollout, StartRecord } from '../../../core/rollout/types.ts';
import { decodeData, decodeList } from './codec.ts';
import { Conflict, type Read, type Records } from './records.ts';

export interface RolloutRecord {
  readonly rollout: Rollout;
  readonly starts: readonly StartRecord[];
}

/** The rollout and starts a read record holds. */
export function rolloutOf(r: Records, read: Read): RolloutRecord {
  const where = { namespace: r.namespace, kind: read.kind, key: read.key };
  const data = read.data as { rollout?: unknown } | undefined;
  return {
    rollout: decodeData('rollout', where, data?.rollout),
    starts: decodeList('start', where, read.data, 'starts'),
  };
}

export async function createRollout(r: Records, rollout: Rollout): Promise<void> {
  const record: RolloutRecord = { rollout, starts: [] };
  if ((await r.create('rollout', rollout.id, record)) === Conflict)
    throw new MoltError(ErrorCode.RolloutExists, `rollout ${rollout.id} already exists`);
}

/** Read → `change` → replace at the resourceVersion read, again on a conflict. */
async function cas<T>(
  r: Records,
  id: string,
  change: (current: RolloutRecord) => { next: RolloutRecord; result: T },
): Promise<T> {
  return r.retrying(`updating rollout ${id}`, async () => {
    const read = await r.get('rollout', id);
    if (read === undefined)
      throw new MoltError(ErrorCode.RolloutNotFound, `rollout ${id} does not exist`);
    const { next, result } = change(rolloutOf(r, read));
    return (await r.replace('rollout', id, next, read.rv)) === Conflict ? Conflict : result;
  });
}

export function updateRollout(
  r: Records,
  id: string,
  change: (current: Rollout) => Rollout,
): Promise<Rollout> {
  return cas(r, id, (current) => {
    const next = change(current.rollout);
    if (next.id !== id)
      throw new MoltError(ErrorCode.BadInput, `an update of rollout ${id} may not change its id`);
    return { next: { ...current, rollout: next }, result: next };
  });
}

export async function recordStart(
  r: Records,
  start: StartRecord,
  progress: MachineProgress,
): Promise<void> {
  if (!Number.isSafeInteger(start.at) || start.at < 0)
    throw new MoltError(ErrorCode.BadInput, `a start time must be epoch ms, not ${start.at}`);
  await cas(r, start.rollout, ({ rollout, starts }) => {
    const had = rollout.machines[start.machine];
    if (had !== undefined && had.phase !== 'Pending')
      throw new MoltError(
        ErrorCode.AlreadyStarted,
        `machine ${start.machine} already has progress (${had.phase}) in rollout ${start.rollout}`,
      );
    const machines = { ...rollout.machines, [start.machine]: progress };
    return { next: { rollout: { ...rollout, machines }, starts: [...starts, start] }, result: 0 };
  });
}

/**
 * Drop start records older than `before` from every rollout that has some, each by its own
 * compare-and-swap. Not one write: a prune interrupted halfway leaves old records for the next
 * one, which rate limits (looking back one period) never count anyway.
 */
export async function pruneStarts(r: Records, before: number): Promise<void> {
  const old = (await r.list(['rollout'])).filter((read) =>
    rolloutOf(r, read).starts.some((s) => s.at < before),
  );
  for (const read of old) {
    const id = read.key;
    await r.retrying(`pruning the starts of rollout ${id}`, async () => {
      const now = await r.get('rollout', id);
      if (now === undefined) return undefined;
      const current = rolloutOf(r, now);
      const starts = current.starts.filter((s) => s.at >= before);
      if (starts.length === current.starts.length) return undefined;
      return (await r.replace('rollout', id, { ...current, starts }, now.rv)) === Conflict
        ? Conflict
        : undefined;
    });
  }
}
