// SPDX-License-Identifier: Apache-2.0
/**
 * The operator config's `dashboard` (docs/adr/0007 §12): the listener, who may sign in, and whether
 * reads need a sign-in at all. A user is a name, a role and the SHA-256 of a token only the user
 * holds (`molt pki dashboard-token` makes one and prints this line); the token itself is never in
 * the config. With `oidc`, people also sign in with the organisation's OpenID Connect provider
 * (single sign-on), their role mapped from their groups.
 *
 * | role | reads | pause, resume, approve, cancel, roll back; hold and release | resume a halted rollout (force) |
 * |---|---|---|---|
 * | viewer | yes | no | no |
 * | operator | yes | yes | no |
 * | admin | yes | yes | yes |
 */
import { z } from 'zod';
import { duration, listenAddress } from './config-parts.ts';
import { DashboardUserRoles } from './dashboard.ts';

/** One person who may sign in to the dashboard. */
export const DashboardUser = z.strictObject({
  /** Shown on the page and recorded in history as `dashboard:<name>`. */
  name: z
    .string()
    .regex(
      /^[a-zA-Z0-9]([a-zA-Z0-9._@-]{0,62}[a-zA-Z0-9])?$/,
      'a user name: 1-64 letters, digits, . _ @ -',
    ),
  role: z.enum(DashboardUserRoles, { message: 'must be viewer, operator or admin' }),
  /** Lower-case hex SHA-256 of the user's token. */
  tokenSha256: z
    .string()
    .regex(
      /^[0-9a-f]{64}$/,
      'the lower-case hex SHA-256 of the token (`molt pki dashboard-token`)',
    ),
});
export type DashboardUser = z.output<typeof DashboardUser>;

const roleRank = { viewer: 0, operator: 1, admin: 2 } as const;

/**
 * `dashboard.oidc`: single sign-on with an OpenID Connect provider (Dex, Keycloak, Entra ID, …),
 * by the authorization code flow with PKCE. A person's role is the highest that one of their groups
 * (the ID token's `groupsClaim`) maps to; someone in no mapped group cannot sign in.
 */
export const DashboardOidc = z.strictObject({
  /** The provider's issuer URL (`https://`; `http://` only on a loopback address, for tests). */
  issuer: z
    .url({ protocol: /^https?$/ })
    .refine(
      (u) =>
        u.startsWith('https:') || /^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])[:/]/.test(u),
      'must be https:// (http:// only for a provider on this machine)',
    ),
  clientId: z.string().min(1).max(256),
  /** A file holding the client secret; absent: a public client (PKCE alone). */
  clientSecretFile: z.string().min(1).optional(),
  /**
   * Where the provider sends people back: this listener's `/v1/session/oidc/callback` as the
   * browser reaches it (register the same URL with the provider).
   */
  redirectUrl: z.url({ protocol: /^https?$/ }).refine(
    // A path only (behind a proxy, any prefix before it); no query or fragment.
    (u) => /^https?:\/\/[^/?#]+(\/[^?#]*)?\/v1\/session\/oidc\/callback$/.test(u),
    'must end in /v1/session/oidc/callback (the dashboard listener’s callback)',
  ),
  /** The button's words: `Sign in with <name>`. */
  name: z.string().min(1).max(64).default('single sign-on'),
  /** The ID token claim that lists the person's groups. */
  groupsClaim: z.string().min(1).max(128).default('groups'),
  /** What the dashboard asks the provider for (`groups` is Dex's and Keycloak's scope for them). */
  scopes: z
    .array(
      z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'a scope: printable, no spaces or quotes'),
    )
    .refine((s) => s.includes('openid'), 'must include openid (without it there is no ID token)')
    .default(['openid', 'email', 'profile', 'groups']),
  /** The claim that names the person (shown, and recorded as `dashboard:<name>`). */
  nameClaim: z.string().min(1).max(128).default('email'),
  /** Group → role; the highest role of a person's groups wins. */
  roles: z
    .array(
      z.strictObject({
        group: z.string().min(1).max(256),
        role: z.enum(DashboardUserRoles, { message: 'must be viewer, operator or admin' }),
      }),
    )
    .min(1, 'map at least one group to a role, or nobody could sign in'),
});
export type DashboardOidc = z.output<typeof DashboardOidc>;

/** The role of someone in `groups`: the highest any of them maps to, or undefined. */
export function roleOfGroups(
  roles: DashboardOidc['roles'],
  groups: readonly string[],
): DashboardUser['role'] | undefined {
  let best: DashboardUser['role'] | undefined;
  for (const r of roles)
    if (groups.includes(r.group) && (best === undefined || roleRank[r.role] > roleRank[best]))
      best = r.role;
  return best;
}

/** `dashboard:` of the operator config. */
export const DashboardConfig = z
  .strictObject({
    listen: listenAddress,
    /** TLS with the API's server certificate; the session cookie is then `Secure`. */
    tls: z.boolean().default(false),
    /** Anyone who reaches the listener may read without signing in (today's view); acting still needs a user. */
    anonymousRead: z.boolean().default(false),
    /** How long a sign-in lasts. */
    sessionTtl: duration.default(8 * 3_600_000),
    users: z.array(DashboardUser).default([]),
    oidc: DashboardOidc.optional(),
  })
  .superRefine((d, ctx) => {
    if (d.users.length === 0 && !d.anonymousRead && d.oidc === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['users'],
        message:
          'nobody could read the dashboard: add a user (`molt pki dashboard-token`), oidc, or anonymousRead: true',
      });
    const names = new Set<string>();
    const tokens = new Set<string>();
    for (const [i, u] of d.users.entries()) {
      if (names.has(u.name))
        ctx.addIssue({ code: 'custom', path: ['users', i, 'name'], message: 'listed twice' });
      if (tokens.has(u.tokenSha256))
        ctx.addIssue({
          code: 'custom',
          path: ['users', i, 'tokenSha256'],
          message: 'another user has the same token: give each person a token of their own',
        });
      names.add(u.name);
      tokens.add(u.tokenSha256);
    }
  });
export type DashboardConfig = z.output<typeof DashboardConfig>;
