// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { ErrorCode, isMoltError } from '../../protocol/index.ts';
import { generateKeyPair, parsePrivateKey, signMessage } from './keys.ts';
import { signLegacy, simpleSigningPayload, verifyLegacySignature } from './legacy.ts';

const digest = `sha256:${'ab'.repeat(32)}`;
const other = `sha256:${'cd'.repeat(32)}`;
const reference = 'registry.example:5000/molt/installer';
const keys = generateKeyPair();
const signed = signLegacy({ privateKeyPem: keys.privateKeyPem, digest, reference });

function verify(
  over: Partial<Parameters<typeof verifyLegacySignature>[0]> = {},
): ReturnType<typeof verifyLegacySignature> {
  return verifyLegacySignature({
    ...signed,
    publicKeyPem: keys.publicKeyPem,
    expectedDigest: digest,
    ...over,
  });
}

describe('cosign legacy signatures', () => {
  it('writes the simple-signing payload byte for byte as cosign does', () => {
    assert.equal(
      Buffer.from(simpleSigningPayload(digest, reference)).toString('utf8'),
      `{"critical":{"identity":{"docker-reference":"${reference}"},"image":{"docker-manifest-digest":"${digest}"},` +
        `"type":"cosign container image signature"},"optional":null}`,
    );
    assert.equal(
      Buffer.from(simpleSigningPayload(digest, reference, { 'a<b': 'x&y' }))
        .toString('utf8')
        .endsWith('"optional":{"a\\u003cb":"x\\u0026y"}}'),
      true,
    );
  });

  it('verifies a signature made with the matching key', () => {
    assert.deepEqual(verify(), { ok: true, format: 'cosign-legacy' });
  });

  it('rejects a signature checked with another key', () => {
    const result = verify({ publicKeyPem: generateKeyPair().publicKeyPem });
    assert.equal(!result.ok && result.code, ErrorCode.SignatureInvalid);
  });

  it('rejects a genuine signature for another digest as a replay', () => {
    const result = verify({ expectedDigest: other });
    assert.equal(!result.ok && result.code, ErrorCode.SignatureDigestMismatch);
    assert.match(!result.ok ? result.reason : '', /is for sha256:abab.*not for sha256:cdcd/);
  });

  it('rejects a payload rewritten to name another digest', () => {
    const forged = Buffer.from(Buffer.from(signed.payload).toString('utf8').replace(digest, other));
    const result = verify({ payload: forged, expectedDigest: other });
    assert.equal(!result.ok && result.code, ErrorCode.SignatureInvalid);
  });

  it('rejects any single changed byte of the payload', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: signed.payload.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        (at, delta) => {
          const tampered = Buffer.from(signed.payload);
          tampered[at] = (tampered[at]! + delta) % 256;
          return !verify({ payload: tampered }).ok;
        },
      ),
      { numRuns: 50 },
    );
  });

  it('rejects a validly signed payload that is not a cosign image signature', () => {
    const payload = Buffer.from(
      `{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"${digest}"}}}`,
    );
    const signatureB64 = signMessage(parsePrivateKey(keys.privateKeyPem), payload).toString(
      'base64',
    );
    const result = verify({ payload, signatureB64 });
    assert.equal(!result.ok && result.code, ErrorCode.SignatureUnsupported);
  });

  it('rejects a validly signed payload that is not JSON', () => {
    const payload = Buffer.from('hello');
    const signatureB64 = signMessage(parsePrivateKey(keys.privateKeyPem), payload).toString(
      'base64',
    );
    const result = verify({ payload, signatureB64 });
    assert.equal(!result.ok && result.code, ErrorCode.SignatureMalformed);
  });

  it('rejects a signature annotation that is not base64', () => {
    const result = verify({ signatureB64: 'not base64!' });
    assert.equal(!result.ok && result.code, ErrorCode.SignatureMalformed);
  });

  it('verifies RSA and Ed25519 signatures too', () => {
    for (const type of ['rsa', 'ed25519'] as const) {
      const pair =
        type === 'rsa'
          ? generateKeyPairSync('rsa', { modulusLength: 2048 })
          : generateKeyPairSync('ed25519');
      const privateKeyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const publicKeyPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const s = signLegacy({ privateKeyPem, digest, reference });
      assert.deepEqual(
        verifyLegacySignature({ ...s, publicKeyPem, expectedDigest: digest }),
        { ok: true, format: 'cosign-legacy' },
        type,
      );
    }
  });

  it('throws MOLT_PUBLIC_KEY_INVALID for a public key that is not PEM', () => {
    assert.throws(
      () => verify({ publicKeyPem: 'not a key' }),
      (e) => isMoltError(e, ErrorCode.PublicKeyInvalid),
    );
  });
});
