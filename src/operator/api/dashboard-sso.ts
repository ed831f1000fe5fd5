// SPDX-License-Identifier: Apache-2.0
/**
 * Single sign-on on the dashboard (config `dashboard.oidc`): the OpenID Connect authorization
 * code flow with PKCE, by `openid-client` (a certified relying party; the checks of state, nonce,
 * issuer, audience, signature and expiry are the library's, not ours). `start` sends the browser
 * to the provider; `finish` takes the code it comes back with, and answers who the person is and
 * the role their groups map to. Someone in no mapped group is refused.
 *
 * Each sign-in under way is kept here, by its `state`, for ten minutes at most and a bounded
 * number at once: the browser carries only the state (in the provider's redirect), so the flow
 * works whatever site the provider is on (a SameSite=Strict cookie would not come back with it).
 */
import * as oidc from 'openid-client';
import { ErrorCode, errorMessage, MoltError } from '../../core/errors.ts';
import { withoutUserInfo } from '../../core/redact.ts';
import { roleOfGroups, type DashboardOidc } from '../../protocol/dashboard-config.ts';
import type { Session } from './dashboard-sessions.ts';

/** The settings with the client secret read from its file. */
export type SsoSettings = DashboardOidc & { readonly clientSecret?: string | undefined };

/** How long a person may take at the provider. */
const pendingMs = 10 * 60_000;
/** Sign-ins under way at once; past it, new ones are refused until some end. */
const maxPending = 1000;
/** The provider's answers (discovery, token) must come within this. */
const providerTimeoutS = 10;

interface Pending {
  readonly verifier: string;
  readonly nonce: string;
  readonly until: number;
}

const unavailable = (e: unknown, what: string): MoltError =>
  new MoltError(ErrorCode.SsoUnavailable, withoutUserInfo(`${what}: ${errorMessage(e)}`), {
    hint: 'check dashboard.oidc.issuer and that the provider is up; token sign-in still works',
  });

/** A name as the page shows it and history records it: printable, at most 64 characters. */
const shownName = (raw: string): string => raw.replace(/[^\p{L}\p{N}._@+-]/gu, '').slice(0, 64);

export class DashboardSso {
  private readonly o: SsoSettings;
  private readonly now: () => number;
  private readonly pending = new Map<string, Pending>();
  private configured: oidc.Configuration | undefined;

  constructor(o: SsoSettings, now: () => number) {
    this.o = o;
    this.now = now;
  }

  /** The button's words. */
  get name(): string {
    return this.o.name;
  }

  /** The provider's configuration, discovered once (the provider may start after the operator). */
  private async configuration(): Promise<oidc.Configuration> {
    if (this.configured !== undefined) return this.configured;
    const secret = this.o.clientSecret;
    try {
      this.configured = await oidc.discovery(
        new URL(this.o.issuer),
        this.o.clientId,
        secret,
        secret === undefined ? oidc.None() : undefined,
        {
          timeout: providerTimeoutS,
          // The schema allows http:// only for a provider on this machine (a test's).
          // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated to stand out, as here
          ...(this.o.issuer.startsWith('http:') && { execute: [oidc.allowInsecureRequests] }),
        },
      );
    } catch (e) {
      throw unavailable(e, `the OpenID Connect provider ${this.o.issuer} cannot be discovered`);
    }
    return this.configured;
  }

  private sweep(): void {
    const now = this.now();
    for (const [state, p] of this.pending) if (p.until <= now) this.pending.delete(state);
  }

  /** Where to send the browser: the provider's authorization endpoint for a new sign-in. */
  async start(): Promise<URL> {
    const config = await this.configuration();
    this.sweep();
    if (this.pending.size >= maxPending)
      throw new MoltError(ErrorCode.RateLimited, 'too many sign-ins under way: try again shortly');
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    this.pending.set(state, { verifier, nonce, until: this.now() + pendingMs });
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.o.redirectUrl,
      scope: this.o.scopes.join(' '),
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  }

  /** The person the provider sent back with `query` (the callback's query string), and their role. */
  async finish(query: string): Promise<Session['user']> {
    const url = new URL(this.o.redirectUrl);
    url.search = query;
    const state = url.searchParams.get('state') ?? '';
    const pending = this.pending.get(state);
    this.pending.delete(state);
    if (pending === undefined || pending.until <= this.now())
      throw new MoltError(
        ErrorCode.Unauthenticated,
        'this sign-in was not started here, or took too long',
        {
          hint: 'sign in again from the dashboard',
        },
      );
    const refused = url.searchParams.get('error');
    if (refused !== null)
      throw new MoltError(
        ErrorCode.Unauthenticated,
        `the provider did not sign you in: ${url.searchParams.get('error_description') ?? refused}`,
      );
    const config = await this.configuration();
    let claims: oidc.IDToken | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, url, {
        pkceCodeVerifier: pending.verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (e) {
      throw new MoltError(
        ErrorCode.Unauthenticated,
        `the provider's answer was refused: ${errorMessage(e)}`,
        {
          hint: 'sign in again; if it keeps failing, check dashboard.oidc.clientId and the secret',
        },
      );
    }
    return this.userOf(claims ?? { sub: '' });
  }

  private userOf(claims: Readonly<Record<string, unknown>>): Session['user'] {
    const rawName = claims[this.o.nameClaim] ?? claims['sub'];
    const name = shownName(typeof rawName === 'string' ? rawName : '');
    const rawGroups = claims[this.o.groupsClaim];
    const groups = Array.isArray(rawGroups) ? rawGroups.filter((g) => typeof g === 'string') : [];
    const role = roleOfGroups(this.o.roles, groups);
    if (name === '' || role === undefined)
      throw new MoltError(
        ErrorCode.Forbidden,
        name === ''
          ? `the provider named nobody (no ${this.o.nameClaim} or sub claim)`
          : `${name} is in no group this dashboard gives a role (${this.o.groupsClaim}: ${groups.join(', ') || 'none'})`,
        { hint: `ask to be added to one of: ${this.o.roles.map((r) => r.group).join(', ')}` },
      );
    return { name, role };
  }
}
