// SPDX-License-Identifier: Apache-2.0
/** The rollout writes of the etcd operator store: create, compare-and-swap update, recordStart. */
import { randomUUID } from 'node:crypto';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { MachineProgress } from '../../../core/rollout/types.ts';
import { commit, Conflict, get, retrying, type Current, type StoreCtx } from './cas.ts';
import { decode, encode } from './codec.ts';
import type { Rollout, StartRecord } from './layout.ts';

interface Stored {
  readonly rollout: Rollout;
  readonly kv: Current;
}

async function readRollout(ctx: StoreCtx, id: string): Promise<Stored> {
  const kv = await get(ctx, ctx.keys.rollout(id));
  if (kv === undefined)
    throw new MoltError(ErrorCode.RolloutNotFound, `rollout ${id} does not exist`, {
      hint: 'list rollouts with `molt rollout list`',
    });
  return { rollout: decode('rollout', kv.key, kv.value), kv };
}

export async function createRollout(ctx: StoreCtx, rollout: Rollout): Promise<void> {
  const key = ctx.keys.rollout(rollout.id);
  const outcome = await commit(ctx, {
    what: `creating rollout ${rollout.id}`,
    guard: key,
    modRevision: '0',
    current: undefined,
    puts: [{ key, value: encode(rollout) }],
  });
  if (outcome === 'conflict')
    throw new MoltError(ErrorCode.RolloutExists, `rollout ${rollout.id} already exists`, {
      hint: 'choose another id, or look at it with `molt rollout status`',
    });
}

/**
 * Read → `change` → compare-and-swap on the rollout's mod revision, again on a conflict. After an
 * unknown outcome, a re-read showing exactly the bytes this call wrote counts as written (a
 * racing writer that computed the very same value from the same base is indistinguishable, and
 * left the same state).
 */
export function updateRollout(
  ctx: StoreCtx,
  id: string,
  change: (current: Rollout) => Rollout,
): Promise<Rollout> {
  return retrying(ctx, `updating rollout ${id}`, async () => {
    const { rollout, kv } = await readRollout(ctx, id);
    const next = change(rollout);
    if (next.id !== id)
      throw new MoltError(ErrorCode.BadInput, `an update of rollout ${id} may not change its id`);
    const outcome = await commit(ctx, {
      what: `updating rollout ${id}`,
      guard: kv.key,
      modRevision: kv.modRevision,
      current: kv.value,
      puts: [{ key: kv.key, value: encode(next) }],
    });
    return outcome === 'written' ? next : Conflict;
  });
}

/** True when `progress` means the machine has been started (explicit `Pending` has not). */
export const started = (progress: MachineProgress | undefined): boolean =>
  progress !== undefined && progress.phase !== 'Pending';

/**
 * One transaction, guarded by the rollout's mod revision: the rollout with the machine's progress
 * and the start record. The guard also covers "the machine has no progress": it is checked on the
 * value read at that revision. The start key's nonce makes it this call's own, so a re-read after
 * an unknown outcome tells exactly whether this start landed.
 */
export async function recordStart(
  ctx: StoreCtx,
  start: StartRecord,
  progress: MachineProgress,
): Promise<void> {
  if (!Number.isSafeInteger(start.at) || start.at < 0)
    throw new MoltError(
      ErrorCode.BadInput,
      `a start time must be epoch milliseconds, not ${start.at}`,
    );
  const startKey = ctx.keys.start(start.at, randomUUID());
  const what = `recording the start of ${start.machine} in rollout ${start.rollout}`;
  await retrying(ctx, what, async () => {
    const { rollout, kv } = await readRollout(ctx, start.rollout);
    const had = rollout.machines[start.machine];
    if (started(had)) throw alreadyStarted(start, had?.phase ?? 'Pending');
    const proof = { key: startKey, value: encode(start) };
    const next: Rollout = {
      ...rollout,
      machines: { ...rollout.machines, [start.machine]: progress },
    };
    const outcome = await commit(ctx, {
      what,
      guard: kv.key,
      modRevision: kv.modRevision,
      current: kv.value,
      puts: [{ key: kv.key, value: encode(next) }, proof],
      proof,
    });
    return outcome === 'written' ? undefined : Conflict;
  });
}

export function alreadyStarted(start: StartRecord, phase: string): MoltError {
  return new MoltError(
    ErrorCode.AlreadyStarted,
    `machine ${start.machine} already has progress (${phase}) in rollout ${start.rollout}; it is never started twice`,
    { details: { machine: start.machine, rollout: start.rollout, phase } },
  );
}
