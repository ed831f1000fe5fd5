// SPDX-License-Identifier: Apache-2.0
/**
 * The dashboard's entry point (index.html loads it as an ES module). The first state comes in the
 * page itself (no empty first paint); after that the page reads `/v1/dashboard` every 2 s and
 * whenever the live event stream reports something, and draws the page the hash names: the fleet,
 * the releases and pools, a rollout, a machine, or the sign-in form (also the only page when reads need a sign-in).
 */
import {
  ApiError,
  embeddedState,
  hasFleet,
  readOperations,
  readRollout,
  readState,
  type PageState,
} from './api.ts';
import type { DashboardStateView } from '../protocol/dashboard.ts';
import type { ActContext } from './actions.ts';
import { find, setPill } from './dom.ts';
import { clock } from './format.ts';
import { followEvents } from './events.ts';
import { drawMachinePage, operationRows } from './machine-page.ts';
import { drawOverview } from './overview.ts';
import { drawPoolsPage } from './pools-page.ts';
import { drawRolloutPage } from './rollout-page.ts';
import { routeOf, type Route } from './route.ts';
import { drawUser, wireLogin, type SessionHooks } from './session.ts';

const pollMs = 2000;
let state: PageState = embeddedState() ?? { session: { anonymousRead: false } };
let route: Route = routeOf(location.hash);
let stopEvents: (() => void) | undefined;
let followed = '';

let noticeTimer: ReturnType<typeof setTimeout> | undefined;

/** Say what an action did; a success fades after a while, a refusal stays until the next. */
function notify(text: string, look: 'ok' | 'bad'): void {
  const notice = find('#notice');
  setPill(notice, text, look);
  clearTimeout(noticeTimer);
  if (look === 'ok')
    noticeTimer = setTimeout(() => {
      setPill(notice, '', '');
    }, 10_000);
}

const hooks: SessionHooks = {
  changed: (session) => {
    state = { session };
    if (route.page === 'login') location.hash = '#/';
    void refresh();
  },
  notify,
};

const context = (): ActContext => ({
  session: state.session,
  notify,
  refresh: () => void refresh(),
});

/** Follow the events the page shows: all on the fleet page, one rollout's or machine's on theirs. */
function follow(r: Route, readable: boolean, who: string | undefined): void {
  // A sign-in reopens the stream: decisions (holds, blocks) reach signed-in people only.
  const key = readable ? JSON.stringify([r, who]) : '';
  if (key === followed) return;
  stopEvents?.();
  stopEvents = undefined;
  followed = key;
  if (!readable || r.page === 'login') return;
  const filter =
    r.page === 'rollout' ? { rollout: r.id } : r.page === 'machine' ? { machine: r.id } : undefined;
  if (r.page === 'releases') return;
  const list = r.page === 'overview' ? find('#events') : find(`#${r.page}-events`);
  stopEvents = followEvents({ list, pill: find('#live'), filter, onEvent: () => void refresh() });
}

async function drawRoute(): Promise<void> {
  const s = state;
  drawUser(s.session, hooks);
  const readable = hasFleet(s);
  const page = readable ? route.page : 'login';
  for (const p of ['overview', 'releases', 'rollout', 'machine', 'login'])
    find(`#${p}-page`).hidden = p !== page;
  follow(route, readable, s.session.user?.name);
  for (const pill of ['#leader', '#live', '#updated']) find(pill).hidden = !readable;
  // The releases page follows no event stream (it redraws from the state every 2 s).
  if (route.page === 'releases') find('#live').hidden = true;
  if (!readable) return;
  setPill(find('#leader'), s.plan.leader ? 'leader' : 'standby', s.plan.leader ? 'ok' : '');
  find('#updated').textContent = `updated ${clock(Date.now())}`;
  await drawPage(route, s);
}

/** Fill the machine page's journal (the operator caches each agent's answer for a few seconds). */
async function showOperations(id: string): Promise<void> {
  const ops = await readOperations(id).catch((e: unknown) =>
    e instanceof Error ? e : new Error(String(e)),
  );
  if (route.page === 'machine' && route.id === id)
    find('#machine-operations tbody').replaceChildren(...operationRows(ops));
}

/** Draw the page `r` names from the reader's state `s`. */
async function drawPage(r: Route, s: DashboardStateView): Promise<void> {
  if (r.page === 'overview' || r.page === 'login')
    drawOverview(s, context(), () => void drawRoute());
  if (r.page === 'releases') drawPoolsPage(s, context());
  if (r.page === 'machine') {
    drawMachinePage(r.id, s, context());
    void showOperations(r.id);
  }
  if (r.page === 'rollout') {
    const id = r.id;
    const found =
      s.rollouts.find((x) => x.id === id) ?? (await readRollout(id).catch(() => undefined));
    drawRolloutPage(id, found, s, context());
  }
}

/**
 * Someone is typing in an action's field or choosing from its list, or has armed a button: a
 * redraw now would take it from them. A focused button is no reason (it keeps the focus after its
 * click, and the redraw must show what the click did).
 */
function interacting(): boolean {
  const focus = document.activeElement;
  const typing = focus instanceof HTMLInputElement || focus instanceof HTMLSelectElement;
  return (
    (typing && focus.closest('.actions') !== null) || document.querySelector('.armed') !== null
  );
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
    const fresh = await readState();
    state = fresh;
    if (!interacting()) await drawRoute();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      state = { session: { anonymousRead: false } };
      await drawRoute();
    } else
      setPill(find('#leader'), `unreachable: ${e instanceof Error ? e.message : String(e)}`, 'bad');
  } finally {
    refreshing = false;
    if (again) {
      again = false;
      void refresh();
    }
  }
}

window.addEventListener('hashchange', () => {
  route = routeOf(location.hash);
  find('#machine-operations tbody').replaceChildren();
  void drawRoute();
});
wireLogin(hooks);
void drawRoute().then(() => {
  document.documentElement.classList.remove('loading');
});
setInterval(() => {
  if (hasFleet(state)) void refresh();
}, pollMs);
