// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet grid: one row per machine with its role and pool, what each A/B slot holds (● booted,
 * ★ committed), the agent's phase and operation, and the machine's health with the last reason.
 */
import type { DashboardMachineView } from '../protocol/operator.ts';
import { el } from './dom.ts';
import { health, slotText, type SlotId } from './format.ts';

function slotCell(m: DashboardMachineView, id: SlotId): HTMLTableCellElement {
  const text = slotText(m, id);
  if (text === undefined) return el('td', {}, '–');
  return el('td', { class: m.observed?.bootedSlot === id ? 'booted' : '' }, text);
}

/** A note under a cell's main text, or nothing. */
const note = (text: string | undefined): HTMLElement | string =>
  text === undefined || text === '' ? '' : el('div', { class: 'muted' }, text);

/** The grid's row of one machine (`data-version`: the release it runs, empty when unknown). */
export function fleetRow(m: DashboardMachineView): HTMLTableRowElement {
  const o = m.observed;
  const h = health(m);
  return el(
    'tr',
    { 'data-machine': m.id, 'data-version': o?.version ?? '' },
    el('td', {}, m.id),
    el('td', {}, m.role),
    el('td', {}, m.pool),
    slotCell(m, 'A'),
    slotCell(m, 'B'),
    el('td', {}, o?.phase ?? '–', note(o?.operation)),
    el('td', { class: `health-${h}` }, h, note(o?.last?.reason)),
  );
}
