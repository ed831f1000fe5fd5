// SPDX-License-Identifier: Apache-2.0
/**
 * The releases and pools page (`#/releases`): per pool, what it follows, runs and takes next, its
 * rules, and the newer releases it passes over and why (a rolled-back release marked, with the
 * Unblock that offers it again); then every blocked release with who blocked it and why. The
 * actions are a signed-in operator's or admin's (`actions.ts`).
 */
import type { DashboardStateView } from '../protocol/dashboard.ts';
import type { BlockView } from '../protocol/operator-blocks.ts';
import { blockForm, unblockButton, type ActContext } from './actions.ts';
import { el, find } from './dom.ts';
import { at } from './format.ts';
import { poolRows, markOf, releaseName, type PassedOver, type PoolRow } from './pools-model.ts';
import { hashOf } from './route.ts';

const markLook: Readonly<Record<PassedOver['mark'], string>> = {
  'rolled back': 'pill bad',
  blocked: 'pill bad',
  'passed over': 'pill',
};

function passedOverList(row: PoolRow, c: ActContext): HTMLElement {
  if (row.passedOver.length === 0)
    return el('p', { class: 'muted' }, 'No newer release passed over.');
  return el(
    'ul',
    { class: 'passed-over' },
    row.passedOver.map((p) =>
      el(
        'li',
        { 'data-release': p.version, 'data-mark': p.mark },
        el('strong', {}, p.version),
        ' ',
        el('span', { class: markLook[p.mark] }, p.mark),
        ' ',
        el('span', { class: 'muted' }, p.reason),
        p.block === undefined ? '' : unblockButton(p.block, c),
      ),
    ),
  );
}

function nextLine(row: PoolRow, c: ActContext): (HTMLElement | string)[] {
  if (row.next === undefined)
    return [el('div', {}, 'next: ', el('span', { class: 'muted' }, row.none ?? 'nothing newer'))];
  const path = row.next.path === undefined ? '' : ` (path ${row.next.path.join(' → ')})`;
  const soak = row.next.notBefore === undefined ? '' : `, not before ${at(row.next.notBefore)}`;
  return [
    el('div', {}, 'next: ', el('strong', {}, row.next.version), `${path}${soak}`),
    blockForm(row.name, row.next, c),
  ];
}

function poolCard(row: PoolRow, c: ActContext): HTMLElement {
  const machines = `${String(row.machines)} machine${row.machines === 1 ? '' : 's'}`;
  return el(
    'div',
    { class: 'card pool-card', 'data-pool': row.name },
    el('h3', {}, row.name, ' ', el('span', { class: 'muted' }, machines)),
    el('div', {}, 'follows: ', row.follows ?? el('span', { class: 'muted' }, 'nothing')),
    el('div', {}, 'runs: ', el('strong', {}, row.runs)),
    ...nextLine(row, c),
    row.rules.length === 0
      ? el('p', { class: 'muted' }, 'No policies: machines start as they can.')
      : el(
          'ul',
          { class: 'rules' },
          row.rules.map((r) => el('li', {}, r)),
        ),
    el('h4', {}, 'Passed over'),
    passedOverList(row, c),
  );
}

function blockRow(b: BlockView, s: DashboardStateView, c: ActContext): HTMLElement {
  const rollout =
    b.rollout === undefined
      ? ''
      : el('a', { href: hashOf({ page: 'rollout', id: b.rollout }) }, b.rollout);
  return el(
    'tr',
    { 'data-block': `${b.digest}/${b.pool ?? ''}` },
    el('td', {}, releaseName(b)),
    el('td', {}, b.pool ?? 'every pool'),
    el('td', {}, el('span', { class: 'pill bad' }, markOf(b, s))),
    el('td', {}, b.reason),
    el('td', {}, b.by),
    el('td', {}, at(b.at)),
    el('td', {}, rollout),
    el('td', {}, unblockButton(b, c)),
  );
}

/** Draw the page from the reader's state. */
export function drawPoolsPage(s: DashboardStateView, c: ActContext): void {
  const rows = poolRows(s);
  find('#pools').replaceChildren(
    ...(rows.length === 0
      ? [el('p', { class: 'muted' }, 'The fleet has no pools.')]
      : rows.map((r) => poolCard(r, c))),
  );
  const signedIn = s.session.user !== undefined;
  find('#blocks-note').textContent = signedIn
    ? s.blocks.length === 0
      ? 'No release is blocked.'
      : ''
    : 'Sign in to see blocked releases and who blocked them.';
  find('#blocks tbody').replaceChildren(...s.blocks.map((b) => blockRow(b, s, c)));
  find('#blocks').hidden = s.blocks.length === 0;
}
