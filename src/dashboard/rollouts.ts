// SPDX-License-Identifier: Apache-2.0
/**
 * A rollout's card: pool → target (a link to its page), its state, a progress bar over the pool,
 * the counts, why it ended when it did not complete, and the actions the person may take.
 */
import type { RolloutView } from '../protocol/operator.ts';
import { rolloutActionBar, type ActContext } from './actions.ts';
import { el } from './dom.ts';
import { barParts, countsLine, rolloutHeading, stateLabel } from './format.ts';
import { hashOf } from './route.ts';

/** The rollout's progress bar (widths set through the CSSOM: the page's policy allows no inline styles). */
export function progressBar(r: RolloutView): HTMLElement {
  return el(
    'div',
    { class: 'bar' },
    barParts(r.counts).map((p) => {
      const part = el('span');
      part.style.width = `${p.percent}%`;
      part.style.background = p.colour;
      return part;
    }),
  );
}

/** The card of one rollout; `data-*` attributes let tests and people find it. */
export function rolloutCard(r: RolloutView, c: ActContext): HTMLElement {
  const counts = r.counts;
  return el(
    'div',
    {
      class: 'card',
      'data-rollout': r.id,
      'data-state': r.state,
      'data-succeeded': counts.Succeeded,
    },
    el('h3', {}, el('a', { href: hashOf({ page: 'rollout', id: r.id }) }, rolloutHeading(r))),
    el('div', { class: `state-${r.state}` }, stateLabel[r.state]),
    r.rollbackOf === undefined ? '' : el('div', { class: 'muted' }, `rolls back ${r.rollbackOf}`),
    progressBar(r),
    el('div', { class: 'muted' }, countsLine(counts, r.id)),
    el('div', { class: 'muted' }, r.endReason ?? r.stateReason ?? ''),
    rolloutActionBar(r, c),
  );
}
