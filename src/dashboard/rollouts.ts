// SPDX-License-Identifier: Apache-2.0
/** A rollout's card: pool → target, its state, a progress bar over the pool and the counts. */
import type { RolloutView } from '../protocol/operator.ts';
import { el } from './dom.ts';
import { barParts, countsLine } from './format.ts';

/** The card of one rollout; `data-*` attributes let tests and people find it. */
export function rolloutCard(r: RolloutView): HTMLElement {
  const c = r.counts;
  return el(
    'div',
    { class: 'card', 'data-rollout': r.id, 'data-state': r.state, 'data-succeeded': c.Succeeded },
    el('h3', {}, `${r.pool} → ${r.target.version}`),
    el('div', { class: `state-${r.state}` }, r.state),
    el(
      'div',
      { class: 'bar' },
      barParts(c).map((p) => el('span', { style: `width:${p.percent}%;background:${p.colour}` })),
    ),
    el('div', { class: 'muted' }, countsLine(c, r.id)),
  );
}
