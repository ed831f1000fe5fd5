// SPDX-License-Identifier: Apache-2.0
/**
 * Writing one machine's progress in a rollout, by compare-and-set and only while the machine is
 * still in flight under the operation the writer means: a pass (or another operator) that got
 * there first wins, and the later write changes nothing rather than undo it.
 */
import type { MachineProgress } from '../../core/rollout/types.ts';
import type { OperatorStore } from '../ports/store.ts';

/** Set one machine's progress, unless it moved on meanwhile (another pass or operator got there). */
export async function setProgress(
  store: OperatorStore,
  rollout: string,
  machine: string,
  progress: MachineProgress,
): Promise<void> {
  await replaceProgress(store, rollout, machine, { progress, expected: progress.operationId });
}

/** Set progress only while the machine is still in flight under operation `expected` (or none). */
export async function replaceProgress(
  store: OperatorStore,
  rollout: string,
  machine: string,
  change: { readonly progress: MachineProgress; readonly expected: string | undefined },
): Promise<void> {
  await store.updateRollout(rollout, (r) => {
    const cur = r.machines[machine];
    if (cur?.phase !== 'InFlight') return r;
    if (cur.operationId !== undefined && cur.operationId !== change.expected) return r;
    return { ...r, machines: { ...r.machines, [machine]: change.progress } };
  });
}
