// SPDX-License-Identifier: Apache-2.0
/** "Why machines wait": each machine the planner holds back, with its reason and `notBefore`. */
import type { PlanView } from '../protocol/operator.ts';
import { el } from './dom.ts';
import { clock, isWaiting } from './format.ts';

/** The table's rows: one per waiting machine, or one saying nothing waits. */
export function waitingRows(plan: PlanView): HTMLTableRowElement[] {
  const waiting = plan.decisions.filter(isWaiting);
  if (waiting.length === 0)
    return [el('tr', {}, el('td', { colspan: 3, class: 'muted' }, 'Nothing is waiting.'))];
  return waiting.map((d) =>
    el(
      'tr',
      { 'data-waiting': d.machine },
      el('td', {}, d.machine),
      el('td', {}, d.rollout),
      el(
        'td',
        {},
        d.reason?.message ?? d.action,
        d.notBefore === undefined
          ? ''
          : el('span', { class: 'muted' }, ` (not before ${clock(d.notBefore)})`),
      ),
    ),
  );
}
