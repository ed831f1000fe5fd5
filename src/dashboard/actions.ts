// SPDX-License-Identifier: Apache-2.0
/**
 * The page's action controls: a rollout's buttons (with an optional reason) and a
 * machine's hold form or release button, a block's Unblock and a pool's next release's Block form,
 * for a signed-in operator or admin only. Each posts to the
 * operator API's own route with the session's CSRF token; what the operator answers — done, or why
 * not — goes to the notice line. An action that ends or reverses something asks for a second click.
 *
 * The page redraws every few seconds: controls are kept per rollout and machine while nothing about
 * them changes, so a half-typed reason survives a refresh (`main.ts` also holds redraws while one
 * has the focus).
 */
import type { SessionView } from '../protocol/dashboard.ts';
import type { DashboardMachineView, RolloutView } from '../protocol/operator.ts';
import {
  actionLabel,
  actionRequest,
  mayAct,
  needsConfirm,
  rolloutActions,
  type RolloutActionName,
} from './actions-model.ts';
import { act } from './api.ts';
import { el } from './dom.ts';
import { blockRequest, releaseName, unblockRequest } from './pools-model.ts';
import type { BlockView } from '../protocol/operator-blocks.ts';

/** What the controls need: who acts, and where results go. */
export interface ActContext {
  readonly session: SessionView;
  /** Tell the person what happened. */
  readonly notify: (text: string, look: 'ok' | 'bad') => void;
  /** Redraw from the operator's state after an action. */
  readonly refresh: () => void;
}

const kept = new Map<string, { key: string; node: HTMLElement }>();

/** The node for `id` built by `build` unless the one kept has the same `key`. */
function keep(id: string, key: string, build: () => HTMLElement): HTMLElement {
  const known = kept.get(id);
  if (known?.key === key) return known.node;
  const node = build();
  kept.set(id, { key, node });
  return node;
}

async function run(c: ActContext, path: string, body: unknown, done: string): Promise<void> {
  try {
    await act(path, body, c.session.csrf ?? '');
    c.notify(done, 'ok');
  } catch (e) {
    const hint = (e as { hint?: unknown }).hint;
    c.notify(
      `${e instanceof Error ? e.message : String(e)}${typeof hint === 'string' ? ` — ${hint}` : ''}`,
      'bad',
    );
  } finally {
    c.refresh();
  }
}

/** A button that acts on the first click, or on the second for actions that need confirming. */
function actionButton(label: string, confirm: boolean, onAct: () => void): HTMLButtonElement {
  const b = el('button', { type: 'button', 'data-action': label }, label);
  let armed: ReturnType<typeof setTimeout> | undefined;
  b.addEventListener('click', () => {
    if (!confirm || armed !== undefined) {
      clearTimeout(armed);
      armed = undefined;
      b.textContent = label;
      b.classList.remove('armed');
      onAct();
      return;
    }
    b.textContent = `Confirm: ${label.toLowerCase()}?`;
    b.classList.add('armed');
    armed = setTimeout(() => {
      armed = undefined;
      b.textContent = label;
      b.classList.remove('armed');
    }, 5000);
  });
  return b;
}

function buildRolloutBar(
  r: RolloutView,
  actions: readonly RolloutActionName[],
  c: ActContext,
): HTMLElement {
  const reason = el('input', {
    type: 'text',
    placeholder: 'reason (optional)',
    maxlength: 500,
    'aria-label': 'reason',
  });
  const buttons = actions.map((a) =>
    actionButton(actionLabel[a], needsConfirm.has(a), () => {
      const { path, body } = actionRequest(r.id, a, reason.value);
      void run(c, path, body, `${actionLabel[a]}: ${r.id} — done`);
    }),
  );
  return el('div', { class: 'actions', 'data-actions': r.id }, reason, ...buttons);
}

/** A rollout's controls, or nothing when the person may not act on it. */
export function rolloutActionBar(r: RolloutView, c: ActContext): HTMLElement | string {
  const actions = rolloutActions(r, c.session.user?.role);
  if (actions.length === 0) return '';
  return keep(`rollout/${r.id}`, `${r.state}|${actions.join()}`, () =>
    buildRolloutBar(r, actions, c),
  );
}

const holdFor = ['1h', '4h', '1d', '7d'] as const;

function buildHoldForm(m: DashboardMachineView, c: ActContext): HTMLElement {
  const path = (verb: string): string => `/v1/machines/${encodeURIComponent(m.id)}/${verb}`;
  if (m.hold !== undefined)
    return el(
      'div',
      { class: 'actions hold-form' },
      actionButton('Release', false, () => void run(c, path('release'), {}, `${m.id} released`)),
    );
  const reason = el('input', {
    type: 'text',
    placeholder: 'why hold it (required)',
    maxlength: 500,
    'aria-label': 'hold reason',
  });
  const span = el(
    'select',
    { 'aria-label': 'hold for' },
    holdFor.map((d) => el('option', { value: d }, d)),
  );
  const hold = actionButton('Hold', false, () => {
    if (reason.value.trim() === '') {
      c.notify('say why the machine is held', 'bad');
      return;
    }
    void run(
      c,
      path('hold'),
      { reason: reason.value.trim(), for: span.value },
      `${m.id} held for ${span.value}`,
    );
  });
  return el('div', { class: 'actions hold-form' }, reason, span, hold);
}

/** A machine's hold form (or release button), or nothing when the person may not act. */
export function holdControls(m: DashboardMachineView, c: ActContext): HTMLElement | string {
  if (!mayAct(c.session.user?.role)) return '';
  return keep(`machine/${m.id}`, m.hold === undefined ? 'free' : 'held', () => buildHoldForm(m, c));
}

/** A block's Unblock button (the release is offered to its pool again), or nothing. */
export function unblockButton(b: BlockView, c: ActContext): HTMLElement | string {
  if (!mayAct(c.session.user?.role)) return '';
  const where = b.pool === undefined ? 'every pool' : `pool ${b.pool}`;
  return keep(`unblock/${b.digest}/${b.pool ?? ''}`, b.at, () => {
    const { path, body } = unblockRequest(b);
    const done = `${releaseName(b)} is offered to ${where} again`;
    return el(
      'div',
      { class: 'actions' },
      actionButton('Unblock', true, () => void run(c, path, body, done)),
    );
  });
}

/** The form that blocks a pool's next release (a reason is required), or nothing. */
export function blockForm(
  pool: string,
  next: { readonly version: string; readonly digest: string },
  c: ActContext,
): HTMLElement | string {
  if (!mayAct(c.session.user?.role)) return '';
  return keep(`block/${pool}`, next.digest, () => {
    const reason = el('input', {
      type: 'text',
      placeholder: 'why block it (required)',
      maxlength: 500,
      'aria-label': 'block reason',
    });
    const button = actionButton(`Block ${next.version}`, true, () => {
      if (reason.value.trim() === '') {
        c.notify('say why the release is blocked', 'bad');
        return;
      }
      const { path, body } = blockRequest(next.digest, pool, reason.value.trim());
      void run(c, path, body, `${next.version} is blocked for pool ${pool}`);
    });
    return el('div', { class: 'actions' }, reason, button);
  });
}
