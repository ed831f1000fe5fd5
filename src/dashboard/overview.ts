// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet page (`#/`): the rollouts with their actions, machines per release, the fleet grid
 * filtered and grouped as the URL says, the timeline, and why machines wait.
 */
import { isEnded } from '../core/rollout/vocabulary.ts';
import type { DashboardStateView } from '../protocol/dashboard.ts';
import type { ActContext } from './actions.ts';
import { el, find } from './dom.ts';
import { filterBar } from './filter-bar.ts';
import { fleetRows } from './fleet-grid.ts';
import { choiceFromQuery, filterMachines, groupMachines } from './filters.ts';
import { releaseChart } from './releases.ts';
import { rolloutCard } from './rollouts.ts';
import { timeline } from './timeline.ts';
import { startInstants } from './timeline-layout.ts';
import { waitingRows } from './waiting.ts';

/** Cards shown: every unfinished rollout, and finished ones up to this many in all. */
const shownRollouts = 6;

/** The rollouts the cards and the timeline show, newest first: unfinished ones first of all. */
function recent(s: DashboardStateView): DashboardStateView['rollouts'] {
  const newest = s.rollouts.toReversed();
  const open = newest.filter((r) => !isEnded(r.state));
  const ended = newest.filter((r) => isEnded(r.state));
  return [...open, ...ended.slice(0, Math.max(0, shownRollouts - open.length))];
}

/** Ids of the rollouts not over (their machines may wait). */
export const liveRollouts = (s: DashboardStateView): Set<string> =>
  new Set(s.rollouts.filter((r) => !isEnded(r.state)).map((r) => r.id));

/** Draw the fleet page from `s`; `redraw` is called when the filters change. */
export function drawOverview(s: DashboardStateView, c: ActContext, redraw: () => void): void {
  const shown = recent(s);
  find('#rollouts').replaceChildren(
    ...(shown.length === 0
      ? [el('p', { class: 'muted' }, 'No rollouts yet.')]
      : shown.map((r) => rolloutCard(r, c))),
  );
  const choice = choiceFromQuery(location.search);
  const machines = filterMachines(s.machines, choice);
  find('#releases').replaceChildren(releaseChart(machines));
  find('#filters').replaceChildren(filterBar(s.machines, choice, redraw));
  find('#fleet tbody').replaceChildren(...fleetRows(groupMachines(machines, choice.group)));
  find('#fleet-count').textContent =
    machines.length === s.machines.length
      ? `${s.machines.length} machines`
      : `${machines.length} of ${s.machines.length} machines`;
  const live = liveRollouts(s);
  const now = Date.now();
  const opens = startInstants(s.plan, live).filter((t) => t > now);
  find('#timeline').replaceChildren(
    timeline({ rollouts: shown, now, opens, windows: s.plan.windows }),
  );
  find('#waiting tbody').replaceChildren(...waitingRows(s.plan, live));
}
