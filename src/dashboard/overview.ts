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

/** The rollouts with only the machines the filters let through (pools not chosen left out). */
function narrowed(
  rollouts: DashboardStateView['rollouts'],
  pool: string | undefined,
  visible: ReadonlySet<string>,
): DashboardStateView['rollouts'] {
  return rollouts
    .filter((r) => pool === undefined || r.pool === pool)
    .map((r) => ({ ...r, machines: r.machines.filter((m) => visible.has(m.machine)) }));
}

/** Draw the fleet page from `s`; `redraw` is called when the filters change. */
export function drawOverview(s: DashboardStateView, c: ActContext, redraw: () => void): void {
  const choice = choiceFromQuery(location.search);
  const machines = filterMachines(s.machines, choice);
  const visible = new Set(machines.map((m) => m.id));
  const pool = choice.filters.pool;
  const cards = recent(s).filter((r) => pool === undefined || r.pool === pool);
  find('#rollouts').replaceChildren(
    ...(cards.length === 0
      ? [el('p', { class: 'muted' }, 'No rollouts yet.')]
      : cards.map((r) => rolloutCard(r, c))),
  );
  find('#releases').replaceChildren(releaseChart(machines));
  find('#filters').replaceChildren(filterBar(s.machines, choice, redraw));
  find('#fleet tbody').replaceChildren(...fleetRows(groupMachines(machines, choice.group)));
  find('#fleet-count').textContent =
    machines.length === s.machines.length
      ? `${s.machines.length} machines`
      : `${machines.length} of ${s.machines.length} machines`;
  const live = liveRollouts(s);
  const now = Date.now();
  const plan = { ...s.plan, decisions: s.plan.decisions.filter((d) => visible.has(d.machine)) };
  const opens = startInstants(plan, live).filter((t) => t > now);
  const rows = narrowed(recent(s), pool, visible);
  find('#timeline').replaceChildren(
    timeline({ rollouts: rows, now, opens, windows: s.plan.windows }),
  );
  find('#waiting tbody').replaceChildren(...waitingRows(plan, live));
}
