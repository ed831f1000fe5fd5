// SPDX-License-Identifier: Apache-2.0
import { ErrorCode } from '../protocol/index.ts';
import { parseChallenges, type Challenge } from './challenge.ts';
import { realmRefusal, type RealmPolicy } from './credential-scope.ts';
import { RegistryError, describeErrorBody, withheldError } from './http-errors.ts';
import type { Credentials } from './types.ts';

/** A token-endpoint answer, as the transport fetched it. */
export interface TokenResponse {
  readonly status: number;
  readonly body: string;
}

/** What the authenticator needs from its owner. */
export interface AuthenticatorOptions {
  readonly registry: string;
  readonly credentials?: Credentials;
  /** The hint when the owner's credentials were withheld from this registry (types.ts). */
  readonly withheldCredentials?: string;
  /** Which token services may receive `credentials` (credential-scope.ts); default: https on `registry`'s host. */
  readonly realms?: Partial<RealmPolicy>;
  /** GET `url` with `headers` (no redirects across hosts, same timeouts); counts as a token request. */
  readonly requestToken: (url: string, headers: Record<string, string>) => Promise<TokenResponse>;
  readonly now: () => number;
}

interface CachedToken {
  readonly token: string;
  readonly expiresAt: number;
}

/** Tokens are dropped this long before they expire, so a request never carries a token that lapses in flight. */
const expirySkewMs = 5_000;
const defaultExpiresInSec = 60;

/**
 * Anonymous, Basic and Bearer-token auth for one registry. It learns the scheme from the first
 * `WWW-Authenticate` challenge, then authenticates later requests up front, so a scan costs one
 * token request per (realm, service, scope), not one 401 round trip per request.
 */
export class Authenticator {
  private challenge: Challenge | undefined;
  private readonly tokens = new Map<string, Promise<CachedToken>>();
  private readonly options: AuthenticatorOptions;

  constructor(options: AuthenticatorOptions) {
    this.options = options;
  }

  /** The `Authorization` value for a request needing `scopes`, or undefined when none is known to be needed. */
  async authorization(scopes: readonly string[]): Promise<string | undefined> {
    const c = this.challenge;
    if (c === undefined) return undefined;
    if (c.scheme === 'basic') return this.basic();
    const key = tokenKey(c, scopes);
    const cached = this.tokens.get(key);
    if (cached !== undefined) {
      const t = await cached;
      if (t.expiresAt > this.options.now()) return `Bearer ${t.token}`;
    }
    const pending = this.fetchToken(c, scopes);
    this.tokens.set(key, pending);
    pending.catch(() => this.tokens.delete(key));
    return `Bearer ${(await pending).token}`;
  }

  /**
   * Learn from a 401. Returns the scopes to retry with (the challenge's own `scope` wins, since
   * the registry says what it needs), or undefined when another attempt cannot succeed.
   */
  challenged(
    header: string | null,
    scopes: readonly string[],
    sent: string | undefined,
  ): readonly string[] | undefined {
    const challenges = parseChallenges(header);
    const chosen =
      challenges.find((c) => c.scheme === 'bearer') ?? challenges.find((c) => c.scheme === 'basic');
    if (chosen === undefined) return undefined;
    this.challenge = chosen;
    if (chosen.scheme === 'basic')
      return this.options.credentials !== undefined && sent === undefined ? scopes : undefined;
    // A token we sent was refused (revoked, or expired early): forget it so the retry fetches a new one.
    if (sent !== undefined) this.tokens.delete(tokenKey(chosen, scopes));
    return chosen.params['scope']?.split(' ').filter((s) => s !== '') ?? scopes;
  }

  private basic(): string | undefined {
    const c = this.options.credentials;
    return c === undefined
      ? undefined
      : `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
  }

  private async fetchToken(c: Challenge, scopes: readonly string[]): Promise<CachedToken> {
    const realm = c.params['realm'] ?? '';
    const url = tokenUrl(realm, c.params['service'], scopes, this.options.registry);
    const headers: Record<string, string> = {};
    const basic = this.basic();
    if (basic !== undefined) {
      this.checkRealm(url);
      headers['authorization'] = basic;
    }
    const started = this.options.now();
    const res = await this.options.requestToken(url.href, headers);
    if (res.status !== 200) throw this.refused(realm, scopes, res);
    const { token, expiresInSec } = parseTokenBody(res.body, realm);
    // Local time, not the server's issued_at: clock skew must not make a fresh token look stale.
    return {
      token,
      expiresAt: started + expiresInSec * 1000 - Math.min(expirySkewMs, (expiresInSec * 1000) / 4),
    };
  }

  /**
   * The challenge names the token service, and a registry (or whatever answered in its place)
   * may name any URL: the password goes there only over https on the registry's own host or a
   * host the owner listed. Anywhere else the request is not made at all, rather than made
   * anonymously, so the owner learns why instead of reading "check the username and password".
   */
  private checkRealm(url: URL): void {
    const policy: RealmPolicy = {
      origin: this.options.realms?.origin ?? new URL(`https://${this.options.registry}`),
      insecure: this.options.realms?.insecure ?? false,
      tokenRealms: this.options.realms?.tokenRealms ?? [],
    };
    const why = realmRefusal(url, policy);
    if (why === undefined) return;
    throw new RegistryError(
      ErrorCode.RegistryCredentialsWithheld,
      `registry ${this.options.registry} sent molt to the token service ${url.origin}; molt did not send it the registry's password: ${why}`,
      {
        hint: `if ${url.host} is this registry's token service, list it in the registry's tokenRealms (it must be https)`,
      },
    );
  }

  private refused(realm: string, scopes: readonly string[], res: TokenResponse): RegistryError {
    const what = `a token for ${scopes.join(' ') || 'registry access'} from ${realm}`;
    const detail = describeErrorBody(res.body);
    const message = `registry ${this.options.registry}: token service refused ${what} (HTTP ${res.status}${detail === '' ? '' : `: ${detail}`})`;
    const withheld = this.options.withheldCredentials;
    const unauthorized = res.status === 401 || res.status === 403;
    if (unauthorized && this.options.credentials === undefined && withheld !== undefined)
      return withheldError(message, withheld, { status: res.status });
    if (unauthorized) {
      return new RegistryError(ErrorCode.RegistryUnauthorized, message, {
        status: res.status,
        hint:
          this.options.credentials === undefined
            ? 'pass --username and --password'
            : 'check the username and password',
      });
    }
    const retryable = res.status === 429 || res.status >= 500;
    return new RegistryError(
      retryable ? ErrorCode.RegistryServerError : ErrorCode.RegistryProtocol,
      message,
      { status: res.status, retryable },
    );
  }
}

/** Tokens are cached per (realm, service, scope set). */
function tokenKey(c: Challenge, scopes: readonly string[]): string {
  return JSON.stringify([c.params['realm'] ?? '', c.params['service'] ?? '', [...scopes].sort()]);
}

function tokenUrl(
  realm: string,
  service: string | undefined,
  scopes: readonly string[],
  registry: string,
): URL {
  let url: URL;
  try {
    url = new URL(realm);
  } catch (e) {
    throw new RegistryError(
      ErrorCode.RegistryProtocol,
      `registry ${registry} sent an auth challenge with an invalid realm "${realm}"`,
      { cause: e },
    );
  }
  if (service !== undefined) url.searchParams.set('service', service);
  for (const s of scopes) url.searchParams.append('scope', s);
  return url;
}

/** Accept `token` or `access_token`; `expires_in` defaults to 60 s (Docker token spec). */
function parseTokenBody(body: string, realm: string): { token: string; expiresInSec: number } {
  let parsed: { token?: unknown; access_token?: unknown; expires_in?: unknown };
  try {
    // `?? {}`: `null` is JSON too, and must read as "no token", not a TypeError.
    parsed = (JSON.parse(body) as typeof parsed | null) ?? {};
  } catch (e) {
    throw new RegistryError(
      ErrorCode.RegistryProtocol,
      `token service ${realm} answered with something that is not JSON`,
      { cause: e },
    );
  }
  const token =
    typeof parsed.token === 'string' && parsed.token !== '' ? parsed.token : parsed.access_token;
  if (typeof token !== 'string' || token === '') {
    throw new RegistryError(
      ErrorCode.RegistryProtocol,
      `token service ${realm} answered without a token`,
    );
  }
  const expiresIn =
    typeof parsed.expires_in === 'number' && parsed.expires_in > 0
      ? parsed.expires_in
      : defaultExpiresInSec;
  return { token, expiresInSec: expiresIn };
}
