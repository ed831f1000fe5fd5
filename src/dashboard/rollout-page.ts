// SPDX-License-Identifier: Apache-2.0
/**
 * A rollout's page (`#/rollout/<id>`): what it moves from and to, its state and why it ended, its
 * actions, every machine of its pool with its phase, wave, times, the planner's decision and the
 * operation, its own timeline, and its events (followed live by `main.ts`).
 */
import type { DashboardStateView } from '../protocol/dashboard.ts';
import type { MachineProgressView, RolloutView } from '../protocol/operator.ts';
import { rolloutActionBar, type ActContext } from './actions.ts';
import { el, find } from './dom.ts';
import { machineLink } from './fleet-grid.ts';
import { batchLabel, clock, countsLine } from './format.ts';
import { hashOf } from './route.ts';
import { progressBar } from './rollouts.ts';
import { timeline } from './timeline.ts';
import { startInstants } from './timeline-layout.ts';

const when = (t: string | undefined): string => (t === undefined ? '–' : clock(t));

function decisionText(m: MachineProgressView): string {
  const d = m.decision;
  if (d === undefined) return m.reason ?? '–';
  const why = d.reason?.message ?? m.reason;
  const next = d.notBefore === undefined ? '' : ` (not before ${clock(d.notBefore)})`;
  return `${d.action}${why === undefined ? '' : `: ${why}`}${next}`;
}

function machineRow(m: MachineProgressView): HTMLTableRowElement {
  return el(
    'tr',
    { 'data-machine': m.machine, 'data-phase': m.phase },
    el('td', {}, machineLink(m.machine)),
    el('td', { class: `phase-${m.phase}` }, m.phase),
    el('td', {}, m.decision === undefined ? '–' : batchLabel(m.decision)),
    el('td', {}, when(m.startedAt)),
    el('td', {}, when(m.finishedAt)),
    el('td', {}, decisionText(m)),
    el('td', { class: 'muted' }, m.operationId ?? ''),
  );
}

/** Facts of the rollout as label/value pairs (only those it has). */
function facts(r: RolloutView): HTMLElement {
  const pairs: [string, string | Node][] = [
    ['id', r.id],
    ['pool', r.pool],
    ['release', `${r.from === undefined ? '' : `${r.from.version} → `}${r.target.version}`],
    ['digest', r.target.digest],
    ['created', new Date(r.createdAt).toLocaleString()],
  ];
  if (r.path !== undefined && r.path.length > 1) pairs.push(['path', r.path.join(' → ')]);
  if (r.endReason !== undefined) pairs.push(['ended', r.endReason]);
  if (r.repairOf !== undefined)
    pairs.push([
      'repairs',
      el('a', { href: hashOf({ page: 'rollout', id: r.repairOf }) }, r.repairOf),
    ]);
  return el(
    'dl',
    { class: 'facts' },
    pairs.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]),
  );
}

/** Draw rollout `r` (undefined: the operator has no such rollout) on its page. */
export function drawRolloutPage(
  id: string,
  r: RolloutView | undefined,
  s: DashboardStateView,
  c: ActContext,
): void {
  find('#rollout-title').textContent = r === undefined ? id : `${r.pool} → ${r.target.version}`;
  const body = find('#rollout-body');
  if (r === undefined) {
    body.replaceChildren(el('p', { class: 'muted' }, `The operator has no rollout ${id}.`));
    return;
  }
  const now = Date.now();
  const opens = startInstants(s.plan, new Set([r.id])).filter((t) => t > now);
  body.replaceChildren(
    el('div', { class: `state-${r.state}`, 'data-state': r.state, id: 'rollout-state' }, r.state),
    facts(r),
    rolloutActionBar(r, c),
    progressBar(r),
    el('div', { class: 'muted' }, countsLine(r.counts, r.id)),
    el('h3', {}, 'Machines'),
    el(
      'table',
      { id: 'rollout-machines' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['Machine', 'Phase', 'Wave', 'Started', 'Finished', 'Decision', 'Operation'].map((h) =>
            el('th', {}, h),
          ),
        ),
      ),
      el('tbody', {}, r.machines.map(machineRow)),
    ),
    el('h3', {}, 'Timeline'),
    el(
      'div',
      { class: 'timeline' },
      timeline({ rollouts: [r], now, opens, windows: s.plan.windows }),
    ),
  );
}
