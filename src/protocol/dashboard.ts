// SPDX-License-Identifier: Apache-2.0
/**
 * The dashboard listener's own contract (docs/adr/0007 §12): signing in, the session, and the one
 * read the page refreshes from. Its actions are the operator API's routes (`OperatorRoutes`:
 * pause, resume, approve, cancel, rollback, hold, release) with the same bodies and answers.
 *
 * A browser signs in by posting a token to {@link DashboardRoutes.session}; the answer sets an
 * HttpOnly, SameSite=Strict cookie ({@link DashboardCookie}, `Secure` on a TLS listener) and says
 * who it is, with a per-session CSRF token every write must echo in {@link DashboardCsrfHeader}.
 */
import { z } from 'zod';
import { BlockView } from './operator-blocks.ts';
import { DashboardMachineView } from './operator-machines.ts';
import { PlanView, RolloutView } from './operator.ts';

export const DashboardRoutes = {
  /** `GET`: who is signed in; `POST` {@link LoginBody}: sign in; `DELETE`: sign out. */
  session: '/v1/session',
  /** `GET`: everything one refresh of the page draws ({@link DashboardStateView}). */
  state: '/v1/dashboard',
  /** `GET`: the machine's journal as its agent summarises it (`OperationSummaryView[]`, newest first). */
  operations: '/v1/machines/:id/operations',
  /** `GET`: off to the OpenID Connect provider to sign in (single sign-on). */
  oidcLogin: '/v1/session/oidc',
  /** `GET`: where the provider sends the person back with a code. */
  oidcCallback: '/v1/session/oidc/callback',
} as const;

/** The session cookie's name. */
export const DashboardCookie = 'molt_session';
/** The header every write from the page carries: the session's CSRF token. */
export const DashboardCsrfHeader = 'x-molt-csrf';

/** What a dashboard user may do: read; act on rollouts and holds; and force (admins). */
export const DashboardUserRoles = ['viewer', 'operator', 'admin'] as const;
export type DashboardUserRole = (typeof DashboardUserRoles)[number];

/** `POST /v1/session`. */
export const LoginBody = z.strictObject({ token: z.string().min(1).max(512) });
export type LoginBody = z.infer<typeof LoginBody>;

/** Who the page speaks for. */
export const SessionView = z.object({
  /** Whether the listener lets anyone read without signing in. */
  anonymousRead: z.boolean(),
  /** Single sign-on's name when the listener offers it (`GET /v1/session/oidc` starts it). */
  sso: z.string().optional(),
  /** The signed-in user; absent: nobody. */
  user: z.object({ name: z.string(), role: z.enum(DashboardUserRoles) }).optional(),
  /** The token writes carry in `x-molt-csrf` (with a user only). */
  csrf: z.string().optional(),
  /** When the sign-in ends (ISO 8601; with a user only). */
  expiresAt: z.string().optional(),
});
export type SessionView = z.infer<typeof SessionView>;

/**
 * A pool as the page shows it: what it follows, its rules as sentences (a gate by its name, never
 * its URL) and how many machines it has. Where it goes next is the plan's `releases`.
 */
export const PoolView = z.object({
  name: z.string(),
  /** `channel stable`, `what pool staging finished`; absent: nothing (no rollout starts by itself). */
  follows: z.string().optional(),
  /** Each policy of the pool, then its other rules (approval, release age, onHalt, onHold …). */
  rules: z.array(z.string()),
  machines: z.number().int(),
});
export type PoolView = z.infer<typeof PoolView>;

/**
 * `GET /v1/dashboard`: the machines, the rollouts (the recent and every unfinished one in full,
 * newest last) and the plan, as one answer — also embedded in the page it serves, so the first
 * paint has data.
 */
export const DashboardStateView = z.object({
  session: SessionView,
  machines: z.array(DashboardMachineView),
  rollouts: z.array(RolloutView),
  plan: PlanView,
  /** The fleet's pools, in the fleet file's order. */
  pools: z.array(PoolView),
  /** The blocked releases; for a signed-in person only (a block's reason and author are theirs). */
  blocks: z.array(BlockView),
});
export type DashboardStateView = z.infer<typeof DashboardStateView>;

/** The line of the operator config's `dashboard.users` for a user (what `molt pki dashboard-token` prints). */
export const dashboardUserLine = (name: string, role: DashboardUserRole, sha256: string): string =>
  `- {name: ${name}, role: ${role}, tokenSha256: ${sha256}}`;
