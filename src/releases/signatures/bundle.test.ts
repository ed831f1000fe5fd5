// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { ErrorCode, isMoltError } from '../../protocol/index.ts';
import { BundleMediaType, createBundle, verifyBundle } from './bundle.ts';
import { generateKeyPair, parsePrivateKey, signMessage } from './keys.ts';
import { CosignSignPredicateType, InTotoPayloadType, preAuthEncoding } from './statement.ts';

const digest = `sha256:${'ab'.repeat(32)}`;
const other = `sha256:${'cd'.repeat(32)}`;
const keys = generateKeyPair();
const bundleJson = createBundle({ privateKeyPem: keys.privateKeyPem, digest });

interface BundleDoc {
  mediaType: string;
  verificationMaterial: { publicKey?: { hint: string }; certificate?: unknown };
  dsseEnvelope?: {
    payload: string;
    payloadType: string;
    signatures: { sig: string; keyid: string }[];
  };
  messageSignature?: unknown;
}

const parse = (json = bundleJson): BundleDoc => JSON.parse(json) as BundleDoc;

function verify(
  over: Partial<Parameters<typeof verifyBundle>[0]> = {},
): ReturnType<typeof verifyBundle> {
  return verifyBundle({
    bundleJson,
    publicKeyPem: keys.publicKeyPem,
    expectedDigest: digest,
    ...over,
  });
}

/** A bundle around `statement`, signed correctly with `keys`, so only the claim checks can fail. */
function bundleFor(statement: unknown): string {
  const doc = parse();
  const payload = Buffer.from(JSON.stringify(statement));
  const sig = signMessage(
    parsePrivateKey(keys.privateKeyPem),
    preAuthEncoding(InTotoPayloadType, payload),
  );
  doc.dsseEnvelope = {
    payload: payload.toString('base64'),
    payloadType: InTotoPayloadType,
    signatures: [{ sig: sig.toString('base64'), keyid: '' }],
  };
  return JSON.stringify(doc);
}

const failure = (r: ReturnType<typeof verifyBundle>): string | undefined =>
  r.ok ? undefined : r.code;

describe('Sigstore bundles', () => {
  it("creates a v0.3 bundle with a DSSE in-toto statement of cosign's signature predicate", () => {
    const doc = parse();
    assert.equal(doc.mediaType, BundleMediaType);
    assert.equal(doc.dsseEnvelope?.payloadType, InTotoPayloadType);
    const statement: unknown = JSON.parse(
      Buffer.from(doc.dsseEnvelope.payload, 'base64').toString('utf8'),
    );
    assert.deepEqual(statement, {
      _type: 'https://in-toto.io/Statement/v1',
      subject: [{ digest: { sha256: 'ab'.repeat(32) }, annotations: {} }],
      predicateType: CosignSignPredicateType,
      predicate: {},
    });
  });

  it('writes the key hint as base64 sha256 of the SPKI DER', () => {
    const der = Buffer.from(keys.publicKeyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    assert.equal(
      parse().verificationMaterial.publicKey?.hint,
      createHash('sha256').update(der).digest('base64'),
    );
  });

  it('verifies a bundle made with the matching key', () => {
    assert.deepEqual(verify(), { ok: true, format: 'sigstore-bundle' });
  });

  it('lets the configured key decide, whatever hint the signer wrote', () => {
    const doc = parse();
    doc.verificationMaterial.publicKey = { hint: 'some-other-hint' };
    assert.deepEqual(verify({ bundleJson: JSON.stringify(doc) }), {
      ok: true,
      format: 'sigstore-bundle',
    });
  });

  it('rejects a bundle checked with another key', () => {
    assert.equal(
      failure(verify({ publicKeyPem: generateKeyPair().publicKeyPem })),
      ErrorCode.SignatureInvalid,
    );
  });

  it('rejects a genuine bundle for another digest as a replay', () => {
    assert.equal(failure(verify({ expectedDigest: other })), ErrorCode.SignatureDigestMismatch);
  });

  it('rejects a statement rewritten to name another digest', () => {
    const doc = parse();
    const env = doc.dsseEnvelope!;
    env.payload = Buffer.from(
      Buffer.from(env.payload, 'base64').toString('utf8').replace('ab'.repeat(32), 'cd'.repeat(32)),
    ).toString('base64');
    assert.equal(
      failure(verify({ bundleJson: JSON.stringify(doc), expectedDigest: other })),
      ErrorCode.SignatureInvalid,
    );
  });

  it('rejects a changed payload type (the signature covers it)', () => {
    const doc = parse();
    doc.dsseEnvelope!.payloadType = 'application/json';
    assert.equal(failure(verify({ bundleJson: JSON.stringify(doc) })), ErrorCode.SignatureInvalid);
  });

  it('rejects garbage and non-bundle JSON as malformed', () => {
    for (const bad of ['', 'not json', '{"x":1}', '[]', 'null', bundleJson.slice(0, 40)]) {
      assert.equal(failure(verify({ bundleJson: bad })), ErrorCode.SignatureMalformed, bad);
    }
  });

  it('does not count an attestation signed by the same key as a signature', () => {
    const sbom = {
      _type: 'https://in-toto.io/Statement/v1',
      subject: [{ digest: { sha256: 'ab'.repeat(32) } }],
      predicateType: 'https://cyclonedx.org/bom',
      predicate: {},
    };
    assert.equal(failure(verify({ bundleJson: bundleFor(sbom) })), ErrorCode.SignatureUnsupported);
  });

  it('rejects a signed payload that is not an in-toto statement', () => {
    assert.equal(
      failure(verify({ bundleJson: bundleFor({ hello: 'world' }) })),
      ErrorCode.SignatureMalformed,
    );
  });

  it('rejects a statement without the digest among its subjects', () => {
    const s = {
      _type: 'https://in-toto.io/Statement/v1',
      subject: [{ digest: { sha512: 'ab' } }],
      predicateType: CosignSignPredicateType,
      predicate: {},
    };
    assert.equal(failure(verify({ bundleJson: bundleFor(s) })), ErrorCode.SignatureDigestMismatch);
  });

  it('refuses message-signature and certificate bundles, which a key cannot verify for an image', () => {
    const message = parse();
    delete message.dsseEnvelope;
    message.messageSignature = {
      messageDigest: { algorithm: 'SHA2_256', digest: Buffer.alloc(32).toString('base64') },
      signature: 'MEUCIQ==',
    };
    assert.equal(
      failure(verify({ bundleJson: JSON.stringify(message) })),
      ErrorCode.SignatureUnsupported,
    );
    const keyless = parse();
    keyless.verificationMaterial = {
      certificate: { rawBytes: Buffer.from('not a real certificate').toString('base64') },
    };
    assert.equal(
      failure(verify({ bundleJson: JSON.stringify(keyless) })),
      ErrorCode.SignatureUnsupported,
    );
  });

  it('verifies Ed25519-signed bundles', () => {
    const pair = generateKeyPairSync('ed25519');
    const privateKeyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const publicKeyPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const json = createBundle({ privateKeyPem, digest });
    assert.deepEqual(verifyBundle({ bundleJson: json, publicKeyPem, expectedDigest: digest }), {
      ok: true,
      format: 'sigstore-bundle',
    });
  });

  it('throws MOLT_PUBLIC_KEY_INVALID for a bad public key and MOLT_BAD_INPUT for a non-sha256 digest', () => {
    assert.throws(
      () =>
        verify({ publicKeyPem: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' }),
      (e) => isMoltError(e, ErrorCode.PublicKeyInvalid),
    );
    assert.throws(
      () => createBundle({ privateKeyPem: keys.privateKeyPem, digest: 'sha512:ab' }),
      (e) => isMoltError(e, ErrorCode.BadInput),
    );
  });
});
