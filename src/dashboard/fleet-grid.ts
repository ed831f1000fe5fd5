// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet grid: one row per machine with its role, pool, cluster and zone, what each A/B slot
 * holds (● booted, ★ committed, ✗ bad), its phase and operation, and its health with the last
 * reason — grouped under a header row per group when the page groups (`filters.ts`).
 */
import type { DashboardMachineView } from '../protocol/operator.ts';
import { el } from './dom.ts';
import type { MachineGroup } from './filters.ts';
import { health, phaseOf, slotOf, slotText, type SlotId } from './format.ts';
import { hashOf } from './route.ts';

const columns = 9;

function slotCell(m: DashboardMachineView, id: SlotId): HTMLTableCellElement {
  const text = slotText(m, id);
  if (text === undefined) return el('td', {}, '–');
  const slot = slotOf(m, id);
  const look = [
    m.observed?.bootedSlot === id ? 'booted' : '',
    slot?.status === 'bad' ? 'bad-slot' : '',
  ]
    .filter((c) => c !== '')
    .join(' ');
  return el('td', { class: look, title: slot?.badReason }, text);
}

/** A note under a cell's main text, or nothing. */
const note = (text: string | undefined): HTMLElement | string =>
  text === undefined || text === '' ? '' : el('div', { class: 'muted' }, text);

/** A link to the machine's page. */
export const machineLink = (id: string): HTMLAnchorElement =>
  el('a', { href: hashOf({ page: 'machine', id }) }, id);

/** The grid's row of one machine (`data-version`: the release it runs, empty when unknown). */
export function fleetRow(m: DashboardMachineView): HTMLTableRowElement {
  const o = m.observed;
  const h = health(m);
  return el(
    'tr',
    { 'data-machine': m.id, 'data-version': o?.version ?? '', 'data-health': h },
    el('td', {}, machineLink(m.id)),
    el('td', {}, m.role),
    el('td', {}, m.pool),
    el('td', {}, m.cluster ?? '–'),
    el('td', {}, m.zone ?? '–'),
    slotCell(m, 'A'),
    slotCell(m, 'B'),
    el('td', {}, phaseOf(m), note(o?.operation)),
    el('td', { class: `health-${h}` }, h, note(o?.last?.reason)),
  );
}

/** The grid's rows: a header row per named group, then its machines; a note when none match. */
export function fleetRows(groups: readonly MachineGroup[]): HTMLTableRowElement[] {
  if (groups.every((g) => g.machines.length === 0))
    return [el('tr', {}, el('td', { colspan: columns, class: 'muted' }, 'No machine matches.'))];
  return groups.flatMap((g) => [
    ...(g.name === ''
      ? []
      : [
          el(
            'tr',
            { class: 'group', 'data-group': g.name },
            el('th', { colspan: columns }, `${g.name} · ${g.machines.length}`),
          ),
        ]),
    ...g.machines.map(fleetRow),
  ]);
}
