// SPDX-License-Identifier: Apache-2.0
/**
 * Which actions the page offers, as plain values (no DOM): what a rollout in its state allows
 * (the operator's rules, `operator/actions/rollout-rules.ts`; the operator checks again) and what the
 * signed-in person's role allows. Viewers and anonymous readers get no buttons.
 */
import type { DashboardUserRole } from '../protocol/dashboard.ts';
import type { RolloutView } from '../protocol/operator.ts';

/** An action on a rollout: `force-resume` is an admin's resume of a halted rollout. */
export type RolloutActionName =
  'approve' | 'pause' | 'resume' | 'force-resume' | 'cancel' | 'rollback';

/** The buttons' words. */
export const actionLabel: Readonly<Record<RolloutActionName, string>> = {
  approve: 'Approve',
  pause: 'Pause',
  resume: 'Resume',
  'force-resume': 'Retry failed (force)',
  cancel: 'Cancel',
  rollback: 'Roll back',
};

/** Actions that end or reverse something: the page asks for a second click. */
export const needsConfirm: ReadonlySet<RolloutActionName> = new Set([
  'cancel',
  'rollback',
  'force-resume',
]);

/** Whether a signed-in person with `role` may act at all. */
export const mayAct = (role: DashboardUserRole | undefined): boolean =>
  role === 'operator' || role === 'admin';

/** A rollback is not rolled back (the API refuses): a new release rolls forward. */
const reversible = (r: Pick<RolloutView, 'from' | 'rollbackOf'>): boolean =>
  r.from !== undefined && r.rollbackOf === undefined;

/** The actions the page offers on `r` to a person with `role` (none to viewers). */
export function rolloutActions(
  r: Pick<RolloutView, 'state' | 'from' | 'rollbackOf'>,
  role: DashboardUserRole | undefined,
): RolloutActionName[] {
  if (!mayAct(role)) return [];
  const back: RolloutActionName[] = reversible(r) ? ['rollback'] : [];
  switch (r.state) {
    case 'AwaitingApproval':
      return ['approve', 'cancel'];
    case 'Active':
      return ['pause', 'cancel'];
    case 'Paused':
      return ['resume', 'cancel', ...back];
    case 'Halted':
      return [...(role === 'admin' ? (['force-resume'] as const) : []), 'cancel', ...back];
    case 'Completed':
      return back;
    case 'RolledBack':
    case 'Superseded':
    case 'Cancelled':
      return [];
  }
}

/** The request an action makes: the API's route and body (a reason where the route takes one). */
export function actionRequest(
  rollout: string,
  action: RolloutActionName,
  reason: string,
): { readonly path: string; readonly body: Record<string, unknown> } {
  const id = encodeURIComponent(rollout);
  const why = reason.trim() === '' ? {} : { reason: reason.trim() };
  switch (action) {
    case 'force-resume':
      return { path: `/v1/rollouts/${id}/resume`, body: { force: true, ...why } };
    case 'approve':
    case 'resume':
    case 'pause':
    case 'cancel':
    case 'rollback':
      return { path: `/v1/rollouts/${id}/${action}`, body: why };
  }
}
