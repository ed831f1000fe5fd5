// SPDX-License-Identifier: Apache-2.0
import { createHash, type Hash } from 'node:crypto';
import { ErrorCode, MoltError } from '../protocol/index.ts';

const algorithms: Readonly<Record<string, string>> = { sha256: 'sha256', sha512: 'sha512' };

/** The `sha256:<hex>` digest of `bytes`. */
export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A hasher for the algorithm of `digest`; an unknown algorithm cannot be verified, so it is refused. */
export function hasherFor(digest: string): Hash {
  const algorithm = algorithms[digest.slice(0, digest.indexOf(':'))];
  if (algorithm === undefined) {
    throw new MoltError(
      ErrorCode.UnsupportedMediaType,
      `digest algorithm of ${digest} is not supported`,
      {
        hint: 'molt verifies sha256 and sha512 digests',
      },
    );
  }
  return createHash(algorithm);
}

/** Hash `bytes` with the algorithm `expected` names, so it can be compared to `expected`. */
export function digestLike(expected: string, bytes: Uint8Array): string {
  const prefix = expected.slice(0, expected.indexOf(':'));
  return `${prefix}:${hasherFor(expected).update(bytes).digest('hex')}`;
}

/** Throw MOLT_DIGEST_MISMATCH when `bytes` do not hash to `expected`; `what` names the content. */
export function verifyDigest(expected: string, bytes: Uint8Array, what: string): void {
  const actual = digestLike(expected, bytes);
  if (actual !== expected) throw digestMismatch(expected, actual, what);
}

/** The error for content whose bytes do not match the digest it was asked for or announced. */
export function digestMismatch(expected: string, actual: string, what: string): MoltError {
  return new MoltError(
    ErrorCode.DigestMismatch,
    `${what}: expected digest ${expected}, received content with digest ${actual}`,
    {
      hint: 'the registry or something between it and molt altered the content; do not trust it',
    },
  );
}
