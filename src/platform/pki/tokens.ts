// SPDX-License-Identifier: Apache-2.0
/**
 * Bearer tokens the operator checks without keeping them: its config holds only each token's
 * SHA-256 (FleetLock clients, dashboard users), so a leaked config grants nothing. Made here, for
 * `molt pki dashboard-token` and the lab; checked here, in constant time, by the operator.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new token: 32 random bytes, base64url (43 characters). */
export const newToken = (): string => randomBytes(32).toString('base64url');

/** The lower-case hex SHA-256 of `token` (what the config holds; as `sha256sum` prints it). */
export const sha256Hex = (token: string): string =>
  createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * Whether `token` hashes to `expectedHex`, compared in constant time (the hash of a guess is
 * compared whole, so how long a compare takes says nothing about how much of it was right).
 */
export function tokenMatches(token: string | undefined, expectedHex: string): boolean {
  if (token === undefined) return false;
  const expected = Buffer.from(expectedHex, 'hex');
  const actual = createHash('sha256').update(token, 'utf8').digest();
  return expected.length === actual.length && timingSafeEqual(actual, expected);
}

/** Whether a presented secret (a header, maybe absent or repeated) is `expected`, in constant time. */
export function sameSecret(
  presented: string | readonly string[] | undefined,
  expected: string,
): boolean {
  if (typeof presented !== 'string') return false;
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
