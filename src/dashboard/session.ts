// SPDX-License-Identifier: Apache-2.0
/**
 * Who the page speaks for: the header's user line (name, role, sign out — or a sign-in link where
 * anyone may read) and the sign-in form. The token goes to the listener once, in a POST; what comes
 * back is an HttpOnly cookie the page's scripts never see, and the CSRF token its actions carry.
 */
import type { SessionView } from '../protocol/dashboard.ts';
import { signIn, signOut } from './api.ts';
import { el, find } from './dom.ts';
import { hashOf } from './route.ts';

/** What the header and the form tell the page. */
export interface SessionHooks {
  /** The session changed (signed in or out): reload what the page shows. */
  readonly changed: (s: SessionView) => void;
  readonly notify: (text: string, look: 'ok' | 'bad') => void;
}

/** The header's user line. */
export function drawUser(s: SessionView, hooks: SessionHooks): void {
  const sso = find('#login-sso');
  sso.hidden = s.sso === undefined;
  find('#login-sso-link').textContent = `Sign in with ${s.sso ?? 'single sign-on'}`;
  const box = find('#user');
  if (s.user === undefined) {
    box.replaceChildren(
      el('a', { href: hashOf({ page: 'login' }), id: 'sign-in-link' }, 'Sign in'),
    );
    return;
  }
  const out = el('button', { type: 'button', class: 'link', id: 'sign-out' }, 'Sign out');
  out.addEventListener('click', () => {
    void signOut().then(hooks.changed, (e: unknown) => {
      hooks.notify(String(e), 'bad');
    });
  });
  box.replaceChildren(
    el('span', { id: 'who', 'data-role': s.user.role }, `${s.user.name} (${s.user.role})`),
    out,
  );
}

/** Wire the sign-in form (once): posts the token, then tells the page. */
export function wireLogin(hooks: SessionHooks): void {
  const form = find('#login-form') as HTMLFormElement;
  const input = find('#login-token') as HTMLInputElement;
  const error = find('#login-error');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.textContent = '';
    signIn(input.value.trim()).then(
      (s) => {
        input.value = '';
        hooks.changed(s);
      },
      (e: unknown) => {
        const hint = (e as { hint?: unknown }).hint;
        error.textContent = `${e instanceof Error ? e.message : String(e)}${typeof hint === 'string' ? ` — ${hint}` : ''}`;
      },
    );
  });
}
