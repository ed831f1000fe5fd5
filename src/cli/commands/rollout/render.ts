// SPDX-License-Identifier: Apache-2.0
/** How `molt rollout` prints a rollout, its history and its progress for people. */
import {
  progressOf,
  shownAt,
  rolloutMachineColumns,
  type HistoryEventView,
  type RolloutView,
} from '../../../protocol/index.ts';
import { renderTable } from '../../output.ts';
import { historyKindLabel } from '../../../core/images/workload.ts';

/** `molt rollout status` as a person reads it: the rollout, then its machines. */
export function describeRollout(r: RolloutView, why?: string): string {
  const lines = [
    `rollout:  ${r.id}`,
    `pool:     ${r.pool}`,
    `target:   ${r.target.version} (${r.target.digest})`,
    ...(r.from === undefined ? [] : [`from:     ${r.from.version} (${r.from.digest})`]),
    ...(r.path === undefined
      ? []
      : [
          `path:     ${[r.from?.version ?? '…', ...r.path].join(' → ')} (a step; the next starts when this completes)`,
        ]),
    ...(r.repairOf === undefined
      ? []
      : [`repairs:  ${r.repairOf} (machines of the pool run another release again)`]),
    ...(r.rollbackOf === undefined
      ? []
      : [`reverses: ${r.rollbackOf} (the pool back on the release it ran before)`]),
    `state:    ${r.state}${r.endReason === undefined ? '' : ` (${r.endReason})`}`,
    ...(why === undefined ? [] : [`why:      ${why}`]),
    `created:  ${shownAt(r.createdAt, Date.now())}`,
    `progress: ${progressLine(r)}`,
  ];
  return `${lines.join('\n')}\n\n${renderTable(rolloutMachineColumns, r.machines)}`;
}

/**
 * `4/6 machines done (1 in flight, 1 failed, 0 pending)`, and `, 1 quarantined` when there are;
 * `noun` names what is counted (an image rollout's `workloads`).
 */
export function progressLine(r: Pick<RolloutView, 'counts'>, noun = 'machines'): string {
  const c = r.counts;
  const pending = c.Pending - c.skipped;
  const quarantined = c.Skipped > 0 ? `, ${String(c.Skipped)} quarantined` : '';
  return `${progressOf(c)} ${noun} done (${String(c.InFlight)} in flight, ${String(c.Failed + c.RolledBack)} failed${quarantined}, ${String(pending)} pending)`;
}

/** One history event as a line. */
export function historyLine(e: HistoryEventView): string {
  return `${e.at.slice(11, 19)}  ${historyKindLabel(e.kind, e.machine).padEnd(15)} ${e.message}\n`;
}
