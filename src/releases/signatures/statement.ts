// SPDX-License-Identifier: Apache-2.0
/** The in-toto statement inside a cosign v3 signature bundle, and DSSE's pre-authentication encoding. */
import { Buffer } from 'node:buffer';
import { ErrorCode, MoltError } from '../../protocol/index.ts';
import { rejected, sha256Hex, type VerifyResult } from './result.ts';

/** DSSE payload type of an in-toto statement. */
export const InTotoPayloadType = 'application/vnd.in-toto+json';
/** The predicate type cosign v3 gives an image signature (as opposed to an attestation). */
export const CosignSignPredicateType = 'https://sigstore.dev/cosign/sign/v1';

const statementTypes = new Set([
  'https://in-toto.io/Statement/v1',
  'https://in-toto.io/Statement/v0.1',
]);

/**
 * The in-toto v1 statement `cosign sign` (v3.1) signs for an image, byte for byte: subject = the
 * digest with empty annotations and no name, empty predicate.
 */
export function signingStatement(digest: string): Buffer {
  const hex = sha256Hex(digest);
  if (hex === undefined)
    throw new MoltError(ErrorCode.BadInput, `cannot sign ${digest}: expected a sha256 digest`);
  const statement = {
    _type: 'https://in-toto.io/Statement/v1',
    subject: [{ digest: { sha256: hex }, annotations: {} }],
    predicateType: CosignSignPredicateType,
    predicate: {},
  };
  return Buffer.from(JSON.stringify(statement), 'utf8');
}

/** DSSE v1 pre-authentication encoding: what the envelope's signature actually covers. */
export function preAuthEncoding(payloadType: string, payload: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, 'ascii'),
    type,
    Buffer.from(` ${payload.length} `, 'ascii'),
    payload,
  ]);
}

interface Statement {
  readonly _type?: unknown;
  readonly predicateType?: unknown;
  readonly subject?: unknown;
}

/**
 * Check a verified statement's claims: an in-toto statement of cosign's signature predicate whose
 * subjects include `expectedDigest`. cosign v3 stores attestations (SBOMs, provenance) under the
 * same referrer type, so an attestation signed by the same key must not count as a signature.
 */
export function checkStatement(payload: Uint8Array, expectedDigest: string): VerifyResult {
  let statement: Statement;
  try {
    statement = JSON.parse(Buffer.from(payload).toString('utf8')) as Statement;
  } catch {
    return rejected(ErrorCode.SignatureMalformed, 'the signed statement is not JSON');
  }
  if (!statementTypes.has(String(statement._type))) {
    return rejected(
      ErrorCode.SignatureMalformed,
      `the signed payload is not an in-toto statement (${String(statement._type)})`,
    );
  }
  if (statement.predicateType !== CosignSignPredicateType) {
    return rejected(
      ErrorCode.SignatureUnsupported,
      `the bundle is an attestation (${String(statement.predicateType)}), not a cosign signature`,
    );
  }
  const expected = sha256Hex(expectedDigest);
  const subjects = Array.isArray(statement.subject) ? (statement.subject as unknown[]) : [];
  const names = subjects.map(
    (s) => (s as { digest?: { sha256?: unknown } } | null)?.digest?.sha256,
  );
  if (expected === undefined || !names.includes(expected)) {
    const signed = names.map((h) => `sha256:${String(h)}`).join(', ') || 'nothing';
    return rejected(
      ErrorCode.SignatureDigestMismatch,
      `the bundle signs ${signed}, not ${expectedDigest}`,
    );
  }
  return { ok: true, format: 'sigstore-bundle' };
}
