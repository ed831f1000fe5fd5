// SPDX-License-Identifier: Apache-2.0
/**
 * "Why machines wait": each machine the planner holds back, with its reason and `notBefore` — of
 * rollouts still running only: a superseded or cancelled rollout's machines wait for nothing.
 */
import type { PlanView } from '../protocol/operator.ts';
import { el } from './dom.ts';
import { machineLink } from './fleet-grid.ts';
import { at, isWaiting, pageReason } from './format.ts';
import { hashOf } from './route.ts';

/** The waiting decisions of the rollouts in `live` (ids of rollouts not over). */
export const waitingDecisions = (
  plan: Pick<PlanView, 'decisions'>,
  live: ReadonlySet<string>,
): PlanView['decisions'] => plan.decisions.filter((d) => isWaiting(d) && live.has(d.rollout));

/** The table's rows: one per waiting machine, or one saying nothing waits. */
export function waitingRows(plan: PlanView, live: ReadonlySet<string>): HTMLTableRowElement[] {
  const waiting = waitingDecisions(plan, live);
  if (waiting.length === 0)
    return [el('tr', {}, el('td', { colspan: 3, class: 'muted' }, 'Nothing is waiting.'))];
  return waiting.map((d) =>
    el(
      'tr',
      { 'data-waiting': d.machine },
      el('td', {}, machineLink(d.machine)),
      el('td', {}, el('a', { href: hashOf({ page: 'rollout', id: d.rollout }) }, d.rollout)),
      el(
        'td',
        {},
        d.reason === undefined ? d.action : pageReason(d.reason.message),
        d.notBefore === undefined
          ? ''
          : el('span', { class: 'muted' }, ` (not before ${at(d.notBefore)})`),
        d.staged === true
          ? el('span', { class: 'muted' }, ' — staged: its start only reboots')
          : '',
      ),
    ),
  );
}
