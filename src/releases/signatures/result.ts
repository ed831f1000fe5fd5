// SPDX-License-Identifier: Apache-2.0
import type { ErrorCode } from '../../protocol/index.ts';

/** The signature formats molt verifies, named as in {@link SignatureState}. */
export type SignatureFormat = 'cosign-legacy' | 'sigstore-bundle';

/** Codes a failed verification can carry; each is a stable MOLT_* error code. */
export type VerifyFailureCode =
  | typeof ErrorCode.SignatureInvalid
  | typeof ErrorCode.SignatureDigestMismatch
  | typeof ErrorCode.SignatureMalformed
  | typeof ErrorCode.SignatureUnsupported;

/** The verdict on one signature: verified in a format, or rejected with a code and a reason. */
export type VerifyResult =
  | { readonly ok: true; readonly format: SignatureFormat }
  | { readonly ok: false; readonly code: VerifyFailureCode; readonly reason: string };

/** A failed {@link VerifyResult}. */
export function rejected(code: VerifyFailureCode, reason: string): VerifyResult {
  return { ok: false, code, reason };
}

/** The `<alg>-<hex>` form of a digest used in cosign tags and file names (`sha256:ab` → `sha256-ab`). */
export function digestTagForm(digest: string): string {
  return digest.replace(':', '-');
}

/** The hex part of a `sha256:<hex>` digest, or undefined for other algorithms or malformed digests. */
export function sha256Hex(digest: string): string | undefined {
  const m = /^sha256:([a-f0-9]{64})$/.exec(digest);
  return m?.[1];
}
