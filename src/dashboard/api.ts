// SPDX-License-Identifier: Apache-2.0
/**
 * The page's calls to the listener that served it (same origin): the embedded first state, the
 * state it refreshes from, signing in and out, and the actions. Answers are protocol's views, typed
 * but not re-validated here: the page loads no schema library (the browser runs these modules as
 * they are, without a bundler), and the operator builds every answer from those very schemas.
 */
import type { DashboardStateView, SessionView } from '../protocol/dashboard.ts';
import type { ErrorBody, OperationSummaryView } from '../protocol/agent.ts';
import type { RolloutView } from '../protocol/operator.ts';

/** An error answer of the listener, for people: message and hint. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly hint: string | undefined;

  constructor(status: number, body: Partial<ErrorBody>) {
    super(body.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body.code ?? 'MOLT_INTERNAL';
    this.hint = body.hint;
  }
}

/** What the page holds: everything it may see, or only who it is when it must sign in first. */
export type PageState = DashboardStateView | { readonly session: SessionView };

/** Whether `s` has the fleet in it (a reader's state). */
export const hasFleet = (s: PageState): s is DashboardStateView => 'machines' in s;

/** The state the operator embedded in the page (`operator/api/dashboard-page.ts`), if any. */
export function embeddedState(): PageState | undefined {
  const text = document.getElementById('molt-state')?.textContent ?? '';
  return text === '' ? undefined : (JSON.parse(text) as PageState);
}

async function answer<T>(res: Response): Promise<T> {
  const body = (await res.json().catch(() => ({}))) as unknown;
  if (!res.ok) throw new ApiError(res.status, body as Partial<ErrorBody>);
  return body as T;
}

/** Everything one refresh draws. */
export async function readState(): Promise<DashboardStateView> {
  return answer(await fetch('/v1/dashboard', { headers: { accept: 'application/json' } }));
}

/** One rollout in full (the rollout page of one the state does not carry). */
export async function readRollout(id: string): Promise<RolloutView> {
  return answer(await fetch(`/v1/rollouts/${encodeURIComponent(id)}`));
}

/** The machine's journal as its agent summarises it, the latest operation first. */
export async function readOperations(machine: string): Promise<OperationSummaryView[]> {
  return answer(await fetch(`/v1/machines/${encodeURIComponent(machine)}/operations`));
}

/** Sign in with a token. */
export async function signIn(token: string): Promise<SessionView> {
  return answer(
    await fetch('/v1/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    }),
  );
}

/** Sign out. */
export async function signOut(): Promise<SessionView> {
  return answer(await fetch('/v1/session', { method: 'DELETE' }));
}

/** An action: a POST with the session's CSRF token (the browser adds the Origin). */
export async function act<T = unknown>(path: string, body: unknown, csrf: string): Promise<T> {
  return answer(
    await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-molt-csrf': csrf },
      body: JSON.stringify(body),
    }),
  );
}
