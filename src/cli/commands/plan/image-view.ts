// SPDX-License-Identifier: Apache-2.0
/**
 * The "image rollouts" section of `molt plan` (docs/adr/0013 decision 8): the image driver's last
 * plan — each live image rollout with the planner's verdict, the next starts and every workload's
 * decision — in the machine plan's tables (`view.ts`).
 */
import { shownAt } from '../../../protocol/operator-columns.ts';
import type { ImagePlanRolloutView, ImagePlanView, PrintColumn } from '../../../protocol/index.ts';
import { renderTable } from '../../output.ts';
import { decisionRow } from './live-view.ts';
import { decisionColumns } from './view.ts';

const columns: readonly PrintColumn<ImagePlanRolloutView>[] = [
  { header: 'ROLLOUT', value: (r) => r.rollout },
  { header: 'POLICY', value: (r) => r.policy },
  { header: 'TAG', value: (r) => r.target.version },
  { header: 'STATE', value: (r) => r.state },
  { header: 'NOW', value: (r) => r.verdict ?? '-' },
  { header: 'MESSAGE', value: (r) => r.message ?? '' },
];

/** The section, from its title on. */
export function describeImagePlan(v: ImagePlanView): string {
  const title = '\nimage rollouts';
  if (v.at === undefined)
    return `${title}: no pass of the image driver yet${v.leader ? '' : ' (this operator does not lead: ask the leader)'}\n`;
  const head = `${title} (the image driver's last pass, at ${shownAt(v.at, Date.now())}${v.leader ? '' : '; this operator does not lead: it may be stale'}):\n`;
  if (v.rollouts.length === 0) return `${head}no image rollout is running: nothing to start\n`;
  const starts = v.decisions.filter((d) => d.action === 'start').map((d) => d.machine);
  const waiting = v.decisions.filter((d) => d.action === 'wait').length;
  const next =
    (starts.length > 0 ? `next: start ${starts.join(', ')}` : 'next: nothing starts now') +
    (waiting > 0 ? `; ${String(waiting)} waiting (why: below)` : '');
  return `${head}${renderTable(columns, v.rollouts)}\n${next}\n${renderTable(
    decisionColumns(v.at).map((c) => (c.header === 'MACHINE' ? { ...c, header: 'WORKLOAD' } : c)),
    v.decisions.map(decisionRow),
  )}`;
}
