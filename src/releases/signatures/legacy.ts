// SPDX-License-Identifier: Apache-2.0
/**
 * The cosign legacy signature format (sigstore/cosign specs/SIGNATURE_SPEC.md): a containers/image
 * "simple signing" JSON payload naming the image digest, signed with a key, the signature carried
 * base64 in a layer annotation of a manifest tagged `sha256-<hex>.sig`.
 */
import { Buffer } from 'node:buffer';
import { ErrorCode } from '../../protocol/index.ts';
import { parsePrivateKey, parsePublicKey, signMessage, verifyMessage } from './keys.ts';
import { rejected, type VerifyResult } from './result.ts';

/** `critical.type` of every cosign image signature payload. */
export const CosignSignatureType = 'cosign container image signature';

/** What {@link signLegacy} produces: the exact payload bytes and the base64 signature over them. */
export interface LegacySignature {
  readonly payload: Uint8Array;
  readonly signatureB64: string;
}

/** Input of {@link signLegacy}. */
export interface SignLegacyOptions {
  readonly privateKeyPem: string;
  /** The signed image's manifest digest (`sha256:…`). */
  readonly digest: string;
  /** The repository as cosign writes it in `docker-reference` (`registry/name`, no tag). */
  readonly reference: string;
  /** `optional` claims (cosign's `-a key=value`); cosign writes `null` when there are none. */
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * The simple-signing payload bytes exactly as cosign (sigstore/sigstore `payload.Cosign`) marshals
 * them: Go struct field order, no whitespace, `"optional":null` without annotations.
 */
export function simpleSigningPayload(
  digest: string,
  reference: string,
  annotations?: Readonly<Record<string, string>>,
): Uint8Array {
  const body = {
    critical: {
      identity: { 'docker-reference': reference },
      image: { 'docker-manifest-digest': digest },
      type: CosignSignatureType,
    },
    optional: annotations ?? null,
  };
  return Buffer.from(goJson(body), 'utf8');
}

/** JSON as Go's encoding/json writes it: like JSON.stringify, but with HTML-safe escapes. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Sign `digest` in cosign's legacy format. */
export function signLegacy(options: SignLegacyOptions): LegacySignature {
  const key = parsePrivateKey(options.privateKeyPem);
  const payload = simpleSigningPayload(options.digest, options.reference, options.annotations);
  return { payload, signatureB64: signMessage(key, payload).toString('base64') };
}

/** Input of {@link verifyLegacySignature}. */
export interface VerifyLegacyOptions {
  readonly payload: Uint8Array;
  readonly signatureB64: string;
  readonly publicKeyPem: string;
  /** The release's manifest digest the payload must name. */
  readonly expectedDigest: string;
}

const base64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Verify a legacy cosign signature offline: the signature over the payload bytes with the key, then
 * the payload's claims. The claims are checked after the signature so a forged payload is reported
 * as a bad signature, and a genuine signature for another image as a digest mismatch (a replay).
 * Throws MOLT_PUBLIC_KEY_INVALID for a bad key; every verdict on the signature is a result.
 */
export function verifyLegacySignature(options: VerifyLegacyOptions): VerifyResult {
  const key = parsePublicKey(options.publicKeyPem);
  const sig = options.signatureB64.trim();
  if (!base64.test(sig))
    return rejected(ErrorCode.SignatureMalformed, 'the signature annotation is not base64');
  if (!verifyMessage(key, options.payload, Buffer.from(sig, 'base64'))) {
    return rejected(
      ErrorCode.SignatureInvalid,
      'the cosign signature does not verify with the configured public key',
    );
  }
  return checkClaims(options.payload, options.expectedDigest);
}

function checkClaims(payload: Uint8Array, expectedDigest: string): VerifyResult {
  let critical: unknown;
  try {
    critical = (JSON.parse(Buffer.from(payload).toString('utf8')) as { critical?: unknown })
      .critical;
  } catch {
    return rejected(ErrorCode.SignatureMalformed, 'the signed payload is not JSON');
  }
  const { type, image } = (critical ?? {}) as {
    type?: unknown;
    image?: { 'docker-manifest-digest'?: unknown };
  };
  if (type !== CosignSignatureType) {
    return rejected(
      ErrorCode.SignatureUnsupported,
      `the signed payload has type ${JSON.stringify(type)}, not "${CosignSignatureType}"`,
    );
  }
  const signed = image?.['docker-manifest-digest'];
  if (signed !== expectedDigest) {
    return rejected(
      ErrorCode.SignatureDigestMismatch,
      `the signature is for ${String(signed)}, not for ${expectedDigest}`,
    );
  }
  return { ok: true, format: 'cosign-legacy' };
}
