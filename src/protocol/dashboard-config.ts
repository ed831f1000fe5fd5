// SPDX-License-Identifier: Apache-2.0
/**
 * The operator config's `dashboard` (docs/adr/0007 §12): the listener, who may sign in, and whether
 * reads need a sign-in at all. A user is a name, a role and the SHA-256 of a token only the user
 * holds (`molt pki dashboard-token` makes one and prints this line); the token itself is never in
 * the config.
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
  })
  .superRefine((d, ctx) => {
    if (d.users.length === 0 && !d.anonymousRead)
      ctx.addIssue({
        code: 'custom',
        path: ['users'],
        message:
          'nobody could read the dashboard: add a user (`molt pki dashboard-token`) or set anonymousRead: true',
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
