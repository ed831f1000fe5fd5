// SPDX-License-Identifier: Apache-2.0
/**
 * The two routes of single sign-on (`dashboard-sso.ts`), open to anyone like the sign-in itself:
 * `GET /v1/session/oidc` sends the browser to the provider; `GET /v1/session/oidc/callback` takes
 * it back, starts the session and answers a small page of its own. That page — not a redirect —
 * moves on to the dashboard: the browser then comes from this site, so it sends the new
 * SameSite=Strict cookie with the next request (after a redirect chain that began at the provider's
 * site it would not). A refusal is that page too, saying why, with a way back: a person followed a
 * link here, so a JSON error would help nobody.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { isMoltError } from '../../core/errors.ts';
import { DashboardRoutes } from '../../protocol/dashboard.ts';
import type { DashboardAuth } from './dashboard-auth.ts';
import type { DashboardSso } from './dashboard-sso.ts';
import { errorAnswer } from './errors.ts';

const escapes: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escaped = (text: string): string => text.replace(/[&<>"']/g, (c) => escapes[c] ?? c);

/** The dashboard's page from the callback's `/v1/session/oidc/callback` (behind any prefix). */
const root = '../../../';

/** The page the callback answers: `text`, and on success a move to the dashboard. */
function page(reply: FastifyReply, status: number, text: string, onward: boolean): FastifyReply {
  const refresh = onward ? `<meta http-equiv="refresh" content="0;url=${root}#/" />` : '';
  const link = onward ? 'Open the dashboard' : 'Back to the sign-in';
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8" />${refresh}` +
        `<title>molt — sign-in</title></head><body><p>${escaped(text)}</p>` +
        `<p><a href="${root}${onward ? '#/' : '#/login'}">${link}</a></p></body></html>`,
    );
}

/** Register the sign-on routes. */
export function ssoRoutes(app: FastifyInstance, auth: DashboardAuth, sso: DashboardSso): void {
  app.get(DashboardRoutes.oidcLogin, async (_request, reply) => {
    try {
      return await reply.redirect((await sso.start()).href, 303);
    } catch (e) {
      return page(reply, errorAnswer(e).status, message(e), false);
    }
  });
  app.get(DashboardRoutes.oidcCallback, async (request, reply) => {
    const at = request.url.indexOf('?');
    const user = await sso.finish(at < 0 ? '' : request.url.slice(at)).catch((e: unknown) => {
      if (e instanceof Error) return e;
      return new Error(String(e));
    });
    if (user instanceof Error) return page(reply, errorAnswer(user).status, message(user), false);
    auth.startSession(reply, user);
    return page(reply, 200, `Signed in as ${user.name} (${user.role}).`, true);
  });
}

function message(e: unknown): string {
  if (!isMoltError(e)) return 'molt hit an unexpected error while signing you in.';
  return e.hint === undefined ? e.message : `${e.message} (${e.hint})`;
}
