// SPDX-License-Identifier: Apache-2.0
/**
 * Writing one unit of an image rollout (docs/adr/0013 decisions 4, 9): its changes recorded on the
 * rollout, then the unit `InFlight` with its start record (one atomic write, refused when it
 * already started — invariant 6), and only then the spec change. A workload someone else edited
 * since it was read is not overwritten: the unit goes back to Pending and the rollout pauses with
 * the reason. A workload gone is Skipped. Any other failure leaves the unit in flight: the next
 * pass sees whether the change landed and writes it again if not (`settle.ts`).
 */
import { ErrorCode, errorLine, isMoltError } from '../../core/errors.ts';
import type { MachineProgress, Rollout } from '../../core/rollout/types.ts';
import type { ImageChange, WorkloadRef } from '../../core/images/workload.ts';
import { pauseRollout } from '../loop/act.ts';
import { setProgress } from '../loop/machine-progress.ts';
import { recordTransition, type TransitionSink } from '../transitions/record.ts';
import type { Workloads } from '../ports/workloads.ts';

export interface UnitWriter extends TransitionSink {
  readonly workloads: Workloads;
  readonly log: (line: string) => void;
}

/** Record the unit's changes, then its start; false when another pass started it first. */
export async function recordUnitStart(
  d: UnitWriter,
  r: Rollout,
  unit: string,
  changes: readonly ImageChange[],
): Promise<boolean> {
  await d.store.updateRollout(r.id, (cur) => {
    if (cur.images === undefined || cur.machines[unit] !== undefined) return cur;
    const units = { ...cur.images.units, [unit]: { changes: [...changes] } };
    return { ...cur, images: { ...cur.images, units } };
  });
  const at = d.now();
  try {
    await d.store.recordStart(
      { machine: unit, pool: r.pool, rollout: r.id, at },
      { phase: 'InFlight', startedAt: at },
    );
  } catch (e) {
    if (isMoltError(e, ErrorCode.AlreadyStarted)) return false;
    throw e;
  }
  const to = changes.map((c) => `${c.container} → ${c.to}`).join(', ');
  const message = `${unit}: ${r.rollbackOf === undefined ? 'moving' : 'putting back'} ${to}`;
  d.log(`${r.id}: ${message}`);
  await d.store.appendHistory({
    at,
    kind: 'machine-start',
    rollout: r.id,
    machine: unit,
    message,
    data: { changes: changes.map((c) => ({ ...c })) },
  });
  return true;
}

/** Set a unit's result (only while it is still in flight) and record it. */
export async function finishUnit(
  d: TransitionSink,
  r: Rollout,
  unit: string,
  p: MachineProgress,
): Promise<void> {
  const message = `${unit}: ${p.phase}${p.reason === undefined ? '' : ` (${p.reason})`}`;
  await recordTransition(d, {
    write: (store) => setProgress(store, r.id, unit, p),
    record: {
      log: `${r.id}: ${message}`,
      event: {
        kind: 'machine-result',
        rollout: r.id,
        machine: unit,
        message,
        data: { phase: p.phase, ...(p.reason !== undefined && { reason: p.reason }) },
      },
    },
  });
}

/** A unit that was never changed goes back to Pending (its recorded changes dropped). */
async function putBack(d: TransitionSink, r: Rollout, unit: string): Promise<void> {
  await d.store.updateRollout(r.id, (cur) => {
    if (cur.machines[unit]?.phase !== 'InFlight' || cur.images === undefined) return cur;
    const machines = Object.fromEntries(Object.entries(cur.machines).filter(([k]) => k !== unit));
    const units = Object.fromEntries(Object.entries(cur.images.units).filter(([k]) => k !== unit));
    return { ...cur, machines, images: { ...cur.images, units } };
  });
}

/** Write the spec change of a unit in flight; see the module comment for failures. */
export async function writeUnit(
  d: UnitWriter,
  r: Rollout,
  unit: { readonly id: string; readonly ref: WorkloadRef },
  changes: readonly ImageChange[],
): Promise<void> {
  try {
    await d.workloads.setImages(unit.ref, changes);
  } catch (e) {
    if (isMoltError(e, ErrorCode.WorkloadEdited)) {
      await putBack(d, r, unit.id);
      await pauseRollout(
        d,
        r.id,
        `${errorLine(e)} — molt does not overwrite it; look, then \`molt rollout resume ${r.id}\``,
      );
      return;
    }
    if (isMoltError(e, ErrorCode.WorkloadNotFound)) {
      await finishUnit(d, r, unit.id, {
        phase: 'Skipped',
        startedAt: r.machines[unit.id]?.startedAt ?? d.now(),
        finishedAt: d.now(),
        reason: `the workload is gone (${e.message})`,
      });
      return;
    }
    d.log(
      `${r.id}: ${unit.id}: the image change did not land, trying again next pass: ${errorLine(e)}`,
    );
  }
}
