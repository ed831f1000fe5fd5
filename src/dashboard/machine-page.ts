// SPDX-License-Identifier: Apache-2.0
/**
 * A machine's page (`#/machine/<id>`): its two slots (the release each holds, which one booted,
 * which is committed, a bad slot marked bad with the agent's reason), what it is doing, its hold
 * and the hold controls, its part in every rollout (phase, wave, times, the agent's operation),
 * and its events (followed live by `main.ts`).
 */
import { isEnded } from '../core/rollout/vocabulary.ts';
import type { DashboardStateView } from '../protocol/dashboard.ts';
import type { OperationSummaryView } from '../protocol/agent.ts';
import type { DashboardMachineView, RolloutView } from '../protocol/operator.ts';
import { holdControls, type ActContext } from './actions.ts';
import { el, find } from './dom.ts';
import {
  at,
  batchLabel,
  clock,
  health,
  phaseOf,
  resultLabel,
  slotOf,
  stateLabel,
  type SlotId,
} from './format.ts';
import { hashOf } from './route.ts';

/** What a slot card says under the version: its state, a bad slot's reason, booted and committed. */
function slotLines(m: DashboardMachineView, id: SlotId): (HTMLElement | string)[] {
  const o = m.observed;
  const s = slotOf(m, id);
  const marks = [
    o?.bootedSlot === id ? '● booted' : '',
    o?.committedSlot === id ? '★ committed' : '',
  ];
  if (s === undefined) return [el('div', {}, 'not observed')];
  const bad = s.status === 'bad';
  return [
    el('div', {}, bad ? '✗ bad' : s.status),
    bad && s.badReason !== undefined ? el('div', { class: 'muted' }, s.badReason) : '',
    el('div', { class: 'muted' }, marks.filter((x) => x !== '').join(' · ')),
  ];
}

function slotCard(m: DashboardMachineView, id: SlotId): HTMLElement {
  const s = slotOf(m, id);
  const look = [
    'slot',
    s?.status === 'bad' ? 'bad-slot' : '',
    m.observed?.bootedSlot === id ? 'booted' : '',
  ];
  return el(
    'div',
    {
      class: look.filter((x) => x !== '').join(' '),
      'data-slot': id,
      'data-status': s?.status ?? 'unknown',
    },
    el('h3', {}, `Slot ${id}`),
    el('div', { class: 'slot-version' }, s?.version ?? '–'),
    ...slotLines(m, id),
  );
}

/** The hold as a sentence: until when, by whom and why (who and why for signed-in people only). */
function holdText(hold: NonNullable<DashboardMachineView['hold']>): string {
  const by = hold.by === undefined ? '' : ` by ${hold.by}`;
  const why = hold.reason === undefined ? '' : `: ${hold.reason}`;
  return `until ${at(hold.until)}${by}${why}`;
}

function facts(m: DashboardMachineView): HTMLElement {
  const o = m.observed;
  const last = o?.last;
  const pairs: [string, string | undefined][] = [
    ['role', m.role],
    ['pool', m.pool],
    ['cluster', m.cluster ?? '–'],
    ['zone', m.zone ?? '–'],
    ['release', o?.version ?? '–'],
    ['phase', phaseOf(m)],
    ['operation', o?.operation],
    ['last result', last && resultLabel(last).text],
    ['observed', o && at(o.at)],
    ['held', m.hold && holdText(m.hold)],
  ];
  return el(
    'dl',
    { class: 'facts' },
    pairs.flatMap(([k, v]) => (v === undefined ? [] : [el('dt', {}, k), el('dd', {}, v)])),
  );
}

/** The machine's part in each rollout that touched it or still may, newest first. */
function rolloutRows(id: string, rollouts: readonly RolloutView[]): HTMLTableRowElement[] {
  const rows = rollouts.toReversed().flatMap((r) => {
    const p = r.machines.find((x) => x.machine === id);
    if (p === undefined || (p.phase === 'Pending' && isEnded(r.state))) return [];
    const time = (t: string | undefined): string => (t === undefined ? '–' : clock(t));
    return [
      el(
        'tr',
        { 'data-rollout': r.id },
        el('td', {}, el('a', { href: hashOf({ page: 'rollout', id: r.id }) }, r.id)),
        el('td', {}, `${r.target.version} (${stateLabel[r.state]})`),
        el('td', { class: `phase-${p.phase}` }, p.phase),
        el('td', {}, p.decision === undefined ? '–' : batchLabel(p.decision)),
        el('td', {}, time(p.startedAt)),
        el('td', {}, time(p.finishedAt)),
        el('td', {}, p.reason ?? p.decision?.reason?.message ?? ''),
        el('td', { class: 'muted' }, p.operationId ?? ''),
      ),
    ];
  });
  return rows.length > 0
    ? rows
    : [el('tr', {}, el('td', { colspan: 8, class: 'muted' }, 'No rollout has touched it yet.'))];
}

/** Draw machine `id` on its page from `s`. */
export function drawMachinePage(id: string, s: DashboardStateView, c: ActContext): void {
  const m = s.machines.find((x) => x.id === id);
  find('#machine-title').textContent = id;
  const body = find('#machine-body');
  if (m === undefined) {
    body.replaceChildren(el('p', { class: 'muted' }, `The operator manages no machine ${id}.`));
    return;
  }
  const h = health(m);
  body.replaceChildren(
    el('div', { class: `health-${h}`, id: 'machine-health', 'data-health': h }, h),
    el('div', { class: 'slots' }, slotCard(m, 'A'), slotCard(m, 'B')),
    facts(m),
    holdControls(m, c),
    el('h3', {}, 'Rollouts'),
    el(
      'table',
      { id: 'machine-rollouts' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['Rollout', 'Release', 'Phase', 'Wave', 'Started', 'Finished', 'Reason', 'Operation'].map(
            (x) => el('th', {}, x),
          ),
        ),
      ),
      el('tbody', {}, rolloutRows(id, s.rollouts)),
    ),
  );
}

/** The journal's rows: one per operation, or why there are none. */
export function operationRows(ops: readonly OperationSummaryView[] | Error): HTMLTableRowElement[] {
  const note = (text: string) => [el('tr', {}, el('td', { colspan: 5, class: 'muted' }, text))];
  if (ops instanceof Error) return note(`The agent's journal cannot be read now: ${ops.message}`);
  if (ops.length === 0) return note('No operation yet.');
  return ops.map((o) =>
    el(
      'tr',
      { 'data-operation': o.operationId },
      el('td', {}, o.operationId),
      el('td', {}, clock(o.firstTime)),
      el('td', {}, clock(o.lastTime)),
      el('td', {}, String(o.events)),
      o.result === undefined
        ? el('td', {}, 'running')
        : el('td', { class: resultLabel(o.result).look }, resultLabel(o.result).text),
    ),
  );
}
