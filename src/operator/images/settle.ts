// SPDX-License-Identifier: Apache-2.0
/**
 * Settling the units of image rollouts that are in flight (docs/adr/0013 decisions 4, 9), from
 * the workloads as this pass listed them:
 * - every changed container runs the new image: the workload's own rollout decides — available
 *   is Succeeded; `failed` (a Deployment's progress deadline) is Failed; still progressing after
 *   the policy's `progressTimeout` (default 10 min) is Failed;
 * - every changed container still runs the old image: the change did not land (the API was away):
 *   it is written again;
 * - anything else: someone else changed the workload meanwhile — the unit is Skipped (not a
 *   failure of the image), and the rollout pauses with what the container runs now;
 * - the workload is gone: Skipped.
 * Units of ended rollouts are settled too: an upgrade in flight when a rollout was superseded
 * still finishes, and its result is recorded.
 */
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import {
  workloadRefOf,
  type ImageChange,
  type WorkloadRef,
  type WorkloadView,
} from '../../core/images/workload.ts';
import type { MachineProgress, Rollout } from '../../core/rollout/types.ts';
import { pauseRollout } from '../loop/act.ts';
import { finishUnit, writeUnit, type UnitWriter } from './unit-write.ts';

/** How long a workload may take to become available on its new image, unless the policy says. */
export const DEFAULT_PROGRESS_TIMEOUT_MS = 600_000;

const imageIn = (w: WorkloadView, container: string): string | undefined =>
  w.containers.find((c) => c.name === container)?.image;

async function judge(
  d: UnitWriter,
  r: Rollout,
  ref: WorkloadRef,
  timeoutMs: number,
): Promise<Omit<MachineProgress, 'startedAt'> | undefined> {
  const p = await d.workloads.progress(ref).catch((e: unknown) => {
    if (isMoltError(e, ErrorCode.WorkloadNotFound)) return undefined;
    throw e;
  });
  const now = d.now();
  if (p === undefined) return { phase: 'Skipped', finishedAt: now, reason: 'the workload is gone' };
  if (p.state === 'available') return { phase: 'Succeeded', finishedAt: now };
  if (p.state === 'failed')
    return { phase: 'Failed', finishedAt: now, reason: `${p.reason}: ${p.message}` };
  const started = r.machines[`${ref.kind}/${ref.namespace}/${ref.name}`]?.startedAt ?? now;
  if (now - started <= timeoutMs) return undefined;
  const reason = `ProgressTimeout: not available ${String(Math.round(timeoutMs / 1000))} s after its image changed (${p.message})`;
  return { phase: 'Failed', finishedAt: now, reason };
}

const changesIn = (r: Rollout, id: string): readonly ImageChange[] =>
  r.images?.units[id]?.changes ?? [];

async function settleUnit(
  d: UnitWriter,
  r: Rollout,
  id: string,
  seen: { workloads: ReadonlyMap<string, WorkloadView>; policy: ImagePolicy | undefined },
): Promise<void> {
  const startedAt = r.machines[id]?.startedAt ?? d.now();
  const ref = workloadRefOf(id);
  const w = seen.workloads.get(id);
  const changes = changesIn(r, id);
  if (ref === undefined || w === undefined) {
    const p = {
      phase: 'Skipped',
      startedAt,
      finishedAt: d.now(),
      reason: 'the workload is gone',
    } as const;
    await finishUnit(d, r, id, p);
    return;
  }
  if (changes.every((c) => imageIn(w, c.container) === c.to)) {
    const timeout = seen.policy?.progressTimeoutMs ?? DEFAULT_PROGRESS_TIMEOUT_MS;
    const result = await judge(d, r, ref, timeout);
    if (result !== undefined) await finishUnit(d, r, id, { ...result, startedAt });
    return;
  }
  if (changes.every((c) => imageIn(w, c.container) === c.from)) {
    await writeUnit(d, r, { id, ref }, changes);
    return;
  }
  const now = changes.map((c) => `${c.container} runs ${imageIn(w, c.container) ?? 'nothing'}`);
  const reason = `${ErrorCode.WorkloadEdited}: ${id} was changed by someone else during the rollout (${now.join(', ')})`;
  await finishUnit(d, r, id, { phase: 'Skipped', startedAt, finishedAt: d.now(), reason });
  await pauseRollout(d, r.id, reason);
}

/** See the module comment. `policies` by name. */
export async function settleUnits(
  d: UnitWriter,
  rollouts: readonly Rollout[],
  seen: {
    readonly workloads: ReadonlyMap<string, WorkloadView>;
    readonly policies: ReadonlyMap<string, ImagePolicy>;
  },
): Promise<void> {
  for (const r of rollouts) {
    if (r.images === undefined) continue;
    const policy = seen.policies.get(r.images.policy);
    for (const [id, p] of Object.entries(r.machines))
      if (p.phase === 'InFlight') await settleUnit(d, r, id, { workloads: seen.workloads, policy });
  }
}
