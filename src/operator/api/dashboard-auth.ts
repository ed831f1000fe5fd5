// SPDX-License-Identifier: Apache-2.0
/**
 * Who a dashboard request speaks for, and whether it may (docs/adr/0007 §12). A person signs in
 * with a token whose SHA-256 is a `dashboard.users` entry and gets a session cookie: HttpOnly (the
 * page's scripts never see it), SameSite=Strict (no other site's page sends it), Secure on a TLS
 * listener, ending with the session. A write must also come from the listener's own origin
 * (`Origin`) and carry the session's CSRF token in `x-molt-csrf` — three defences, any one of which
 * stops a forged cross-site request. Failed sign-ins are rate-limited (`login-limiter.ts`); every
 * user's hash is compared, in constant time, on every try.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseCookie, stringifySetCookie } from 'cookie';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { iso } from '../../core/time.ts';
import type { Identity } from '../../platform/https/identity.ts';
import { sameSecret, tokenMatches } from '../../platform/pki/tokens.ts';
import {
  DashboardCookie,
  DashboardCsrfHeader,
  type SessionView,
} from '../../protocol/dashboard.ts';
import type { DashboardUser } from '../../protocol/dashboard-config.ts';
import type { LoginLimiter } from './login-limiter.ts';
import type { Session, SessionBook } from './dashboard-sessions.ts';

/** Options of {@link DashboardAuth}. */
export interface DashboardAuthOptions {
  readonly users: readonly DashboardUser[];
  readonly anonymousRead: boolean;
  /** The listener speaks TLS: the cookie is `Secure` and the expected origin `https:`. */
  readonly tls: boolean;
  readonly sessions: SessionBook;
  readonly limiter: LoginLimiter;
  /** The single sign-on's name, when the listener offers it (the page shows its button). */
  readonly sso?: string | undefined;
}

/** How history records a dashboard user: `dashboard:<name>`. */
export const dashboardActor = (name: string): string => `dashboard:${name}`;

const signIn = 'sign in on the dashboard with your token (`molt pki dashboard-token` makes one)';

/** The user whose token this is, every user compared (no early exit), or undefined. */
function userOf(users: readonly DashboardUser[], token: string): DashboardUser | undefined {
  let found: DashboardUser | undefined;
  for (const u of users) if (tokenMatches(token, u.tokenSha256)) found ??= u;
  return found;
}

/** The dashboard listener's sessions, sign-in and checks. */
export class DashboardAuth {
  private readonly o: DashboardAuthOptions;

  constructor(o: DashboardAuthOptions) {
    this.o = o;
  }

  /** The request's live session, from its cookie. */
  sessionOf(request: FastifyRequest): Session | undefined {
    const header = request.headers.cookie;
    if (header === undefined) return undefined;
    return this.o.sessions.get(parseCookie(header)[DashboardCookie]);
  }

  /** What the page is told about its session. */
  viewOf(session: Session | undefined): SessionView {
    return {
      anonymousRead: this.o.anonymousRead,
      ...(this.o.sso !== undefined && { sso: this.o.sso }),
      ...(session !== undefined && {
        user: { ...session.user },
        csrf: session.csrf,
        expiresAt: iso(session.expiresAt),
      }),
    };
  }

  /** A read needs a session unless the config lets anyone read. */
  checkRead(request: FastifyRequest): Session | undefined {
    const session = this.sessionOf(request);
    if (session === undefined && !this.o.anonymousRead)
      throw new MoltError(
        ErrorCode.Unauthenticated,
        'this dashboard shows the fleet only to signed-in users',
        {
          hint: signIn,
        },
      );
    return session;
  }

  /**
   * A write: from this listener's origin, with a session of a user who may act, carrying the
   * session's CSRF token. Answers who acts, as the API's routes take it.
   */
  checkWrite(request: FastifyRequest, what: string): Identity {
    this.checkOrigin(request);
    const session = this.sessionOf(request);
    if (session === undefined)
      throw new MoltError(ErrorCode.Unauthenticated, `${what} needs a signed-in user`, {
        hint: signIn,
      });
    if (!sameSecret(request.headers[DashboardCsrfHeader], session.csrf))
      throw new MoltError(
        ErrorCode.Forbidden,
        `${what}: the request lacks this session's ${DashboardCsrfHeader} header`,
        {
          hint: 'act from the dashboard page; reload it if it was open before you signed in again',
        },
      );
    const { name, role } = session.user;
    if (role === 'viewer')
      throw new MoltError(ErrorCode.Forbidden, `${name} (role viewer) may not ${what}`, {
        hint: 'this needs a dashboard user with role operator or admin',
      });
    return { name: dashboardActor(name), role };
  }

  /** Sign in with `token`: a new session and its cookie on `reply`. */
  login(request: FastifyRequest, reply: FastifyReply, token: string): Session {
    this.checkOrigin(request);
    // Only this address's own failures (its /64's, for IPv6) refuse it before its token is
    // checked; failures elsewhere never turn a right token away (`login-limiter.ts`).
    const verdict = this.o.limiter.check(request.ip);
    if (!verdict.ok) {
      const seconds = Math.ceil(verdict.retryAfterMs / 1000);
      void reply.header('retry-after', String(seconds));
      throw new MoltError(
        ErrorCode.RateLimited,
        `too many failed sign-ins from this address: try again in ${seconds} s`,
      );
    }
    const user = userOf(this.o.users, token);
    if (user === undefined) {
      this.o.limiter.fail(request.ip);
      throw new MoltError(ErrorCode.Unauthenticated, 'no dashboard user has this token', {
        hint: 'ask for a token, or check it was copied whole (`molt pki dashboard-token` prints it once)',
      });
    }
    return this.startSession(reply, user);
  }

  /** A new session for `user` (a token's, or single sign-on's), its cookie on `reply`. */
  startSession(reply: FastifyReply, user: Session['user']): Session {
    const session = this.o.sessions.create(user);
    void reply.header(
      'set-cookie',
      this.cookie(session.id, Math.floor(this.o.sessions.ttlMs / 1000)),
    );
    return session;
  }

  /** Sign out: the session ends and the cookie is cleared. */
  logout(request: FastifyRequest, reply: FastifyReply): void {
    this.checkOrigin(request);
    const session = this.sessionOf(request);
    if (session !== undefined) this.o.sessions.end(session.id);
    void reply.header('set-cookie', this.cookie('', 0));
  }

  private cookie(value: string, maxAge: number): string {
    return stringifySetCookie({
      name: DashboardCookie,
      value,
      path: '/',
      httpOnly: true,
      sameSite: 'strict',
      secure: this.o.tls,
      maxAge,
    });
  }

  /**
   * A write must come from a page this listener served: its `Origin` names this listener (the
   * `Host` it was asked at, over its own scheme). Browsers send `Origin` on every POST and DELETE.
   */
  private checkOrigin(request: FastifyRequest): void {
    const origin = request.headers.origin;
    const own = `${this.o.tls ? 'https' : 'http'}://${request.headers.host ?? ''}`;
    if (origin === own) return;
    throw new MoltError(
      ErrorCode.Forbidden,
      origin === undefined
        ? `${request.method} ${request.url}: the request names no Origin`
        : `${request.method} ${request.url} from another origin (${origin})`,
      { hint: 'act from the dashboard page itself' },
    );
  }
}
