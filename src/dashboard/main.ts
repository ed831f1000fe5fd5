// SPDX-License-Identifier: Apache-2.0
/**
 * The dashboard's entry point (index.html loads it as an ES module): it reads the operator's API
 * on the same origin — the dashboard listener serves reads only — every 2 s and whenever the live
 * event stream reports something, and redraws the rollouts, the fleet grid, the timeline and why
 * machines wait.
 */
import { readSnapshot, type FleetSnapshot } from './api.ts';
import { el, find, setPill } from './dom.ts';
import { followEvents } from './events.ts';
import { fleetRow } from './fleet-grid.ts';
import { rolloutCard } from './rollouts.ts';
import { timeline } from './timeline.ts';
import { startInstants } from './timeline-layout.ts';
import { waitingRows } from './waiting.ts';

const shownRollouts = 6;
const pollMs = 2000;

function draw(s: FleetSnapshot): void {
  const recent = s.rollouts.slice(-shownRollouts).reverse();
  find('#rollouts').replaceChildren(
    ...(recent.length === 0
      ? [el('p', { class: 'muted' }, 'No rollouts yet.')]
      : recent.map(rolloutCard)),
  );
  find('#fleet tbody').replaceChildren(...s.machines.map(fleetRow));
  const opens = startInstants(s.plan);
  find('#timeline').replaceChildren(
    timeline({ rollouts: recent, now: Date.now(), opens, windows: s.plan.windows }),
  );
  find('#waiting tbody').replaceChildren(...waitingRows(s.plan));
  setPill(find('#leader'), s.plan.leader ? 'leader' : 'standby', s.plan.leader ? 'ok' : '');
  find('#updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
}

// One refresh at a time; asks that come in meanwhile collapse into one more after it, so a burst
// of events neither stacks requests nor is missed.
let refreshing = false;
let again = false;

async function refresh(): Promise<void> {
  if (refreshing) {
    again = true;
    return;
  }
  refreshing = true;
  try {
    draw(await readSnapshot());
  } catch (e) {
    setPill(find('#leader'), `unreachable: ${e instanceof Error ? e.message : String(e)}`, 'bad');
  } finally {
    refreshing = false;
    if (again) {
      again = false;
      void refresh();
    }
  }
}

followEvents({ list: find('#events'), pill: find('#live'), onEvent: () => void refresh() });
void refresh();
setInterval(() => void refresh(), pollMs);
