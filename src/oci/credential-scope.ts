// SPDX-License-Identifier: Apache-2.0
/**
 * Where a registry's password may go. It belongs to one registry: its own origin, and the token
 * service that registry names when that service is reached over verified https on the registry's
 * own host (or a host the owner listed). Anything else — another host a reference or a challenge
 * names, plain HTTP or an unverified certificate off loopback — would hand it to whoever answers.
 */
import { isIP } from 'node:net';
import { ErrorCode } from '../protocol/index.ts';
import { RegistryError } from './http-errors.ts';
import type {
  Credentials,
  ReferencedRegistryOptions,
  RegistryClientOptions,
  ScopedCredentials,
} from './types.ts';

/**
 * 127.0.0.0/8, ::1 and `localhost`: traffic that never leaves the machine. `host` is a URL's
 * hostname or a reference's `host[:port]` (`[::1]:5000`, `localhost:5000`), so the client and the
 * operator's registry hosts ask the same question of one answer.
 */
export function isLoopbackHost(host: string): boolean {
  const h = hostName(host).toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** `host` without its port and IPv6 brackets; a bare IPv6 address (`::1`) is a name whole. */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(1, Math.max(1, host.indexOf(']')));
  return isIP(host) === 6 ? host : (host.split(':')[0] ?? host);
}

/** The credentials for references of `registry` (`host[:port]` as they name it), or none. */
export function credentialsFor(
  scoped: ScopedCredentials | undefined,
  registry: string,
): Credentials | undefined {
  if (scoped === undefined || scoped.registry.toLowerCase() !== registry.toLowerCase())
    return undefined;
  return { username: scoped.username, password: scoped.password };
}

/**
 * Client options for references naming `registry`, reached at `address` (the same, or the mirror
 * the machine's own config maps it to): the credentials only when they are `registry`'s.
 */
export function clientOptionsFor(
  o: ReferencedRegistryOptions | undefined,
  registry: string,
  address: string,
): RegistryClientOptions {
  const { credentials: scoped, ...rest } = o ?? {};
  const credentials = credentialsFor(scoped, registry);
  return { ...rest, registry: address, ...(credentials !== undefined && { credentials }) };
}

/**
 * Refuse credentials for a registry reached over plain HTTP or with an unverified certificate,
 * unless it is on loopback (the lab's and the tests' registries).
 */
export function checkCredentialTransport(
  origin: URL,
  insecure: boolean,
  credentials: Credentials | undefined,
): void {
  if (credentials === undefined || isLoopbackHost(origin.hostname)) return;
  if (origin.protocol === 'https:' && !insecure) return;
  throw new RegistryError(
    ErrorCode.RegistryCredentialsWithheld,
    `registry ${origin.host}: molt does not send its password over ${origin.protocol === 'http:' ? 'plain HTTP' : 'TLS with an unverified certificate'} to a host that is not loopback`,
    {
      hint: 'reach the registry over https with a certificate molt verifies (a CA bundle if needed)',
    },
  );
}

/** What a token service needs to be, to receive the registry's credentials. */
export interface RealmPolicy {
  /** The registry's origin (where the challenge came from). */
  readonly origin: URL;
  readonly insecure: boolean;
  /** Extra token-service hosts (`host` or `host:port`) the owner trusts with the credentials. */
  readonly tokenRealms: readonly string[];
}

/** Why `realm` must not receive the credentials, or undefined when it may. */
export function realmRefusal(realm: URL, p: RealmPolicy): string | undefined {
  const loopbackTest = p.insecure && isLoopbackHost(realm.hostname);
  if (realm.protocol !== 'https:' && !loopbackTest) return 'it is not https';
  const listed = p.tokenRealms.map((h) => h.toLowerCase());
  const sameHost = realm.hostname.toLowerCase() === p.origin.hostname.toLowerCase();
  if (sameHost || listed.includes(realm.host.toLowerCase()) || listed.includes(realm.hostname))
    return undefined;
  return `it is not on the registry's host ${p.origin.hostname}`;
}
