// SPDX-License-Identifier: Apache-2.0
// Golden files made by the real cosign 3.1.3 (see testdata/README.md): molt must verify what cosign
// signs, and must write what cosign writes, byte for byte where cosign's output is deterministic.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ErrorCode } from '../../protocol/index.ts';
import {
  bundleReferrerArtifact,
  legacySignatureArtifact,
  SignatureAnnotation,
} from './artifacts.ts';
import { verifyBundle } from './bundle.ts';
import { generateKeyPair } from './keys.ts';
import { simpleSigningPayload, verifyLegacySignature } from './legacy.ts';
import { signingStatement } from './statement.ts';

const testdata = new URL('./testdata/', import.meta.url);
const read = (name: string): Buffer => readFileSync(new URL(name, testdata));
const text = (name: string): string => read(name).toString('utf8');

/** The digest and repository cosign signed (testdata/README.md). */
const digest = 'sha256:2043b991cda9e079987d119260829d7cc574bc6fbcf9465f1c49bb5bdd0ddea9';
const reference = '127.0.0.1:44793/molt/installer';
const cosignPub = text('cosign.pub');
const payload = read('cosign-3.1.3-legacy-payload.json');
const sigManifest = read('cosign-3.1.3-legacy-manifest.json');
const signatureB64 = (
  JSON.parse(sigManifest.toString('utf8')) as { layers: { annotations: Record<string, string> }[] }
).layers[0]!.annotations[SignatureAnnotation]!;
const bundleJson = text('cosign-3.1.3-bundle.json');
const referrerManifest = read('cosign-3.1.3-referrer-manifest.json');

describe('compatibility with cosign 3.1.3', () => {
  it('verifies a legacy signature made by cosign', () => {
    assert.deepEqual(
      verifyLegacySignature({
        payload,
        signatureB64,
        publicKeyPem: cosignPub,
        expectedDigest: digest,
      }),
      {
        ok: true,
        format: 'cosign-legacy',
      },
    );
    const other = verifyLegacySignature({
      payload,
      signatureB64,
      publicKeyPem: generateKeyPair().publicKeyPem,
      expectedDigest: digest,
    });
    assert.equal(!other.ok && other.code, ErrorCode.SignatureInvalid);
  });

  it('writes the simple-signing payload and the .sig manifest byte for byte as cosign does', () => {
    assert.equal(
      Buffer.from(simpleSigningPayload(digest, reference)).toString('utf8'),
      payload.toString('utf8'),
    );
    const artifact = legacySignatureArtifact([{ payload, signatureB64 }]);
    assert.equal(Buffer.from(artifact.manifest).toString('utf8'), sigManifest.toString('utf8'));
  });

  it('verifies a Sigstore bundle made by cosign', () => {
    assert.deepEqual(
      verifyBundle({ bundleJson, publicKeyPem: cosignPub, expectedDigest: digest }),
      { ok: true, format: 'sigstore-bundle' },
    );
    const replay = verifyBundle({
      bundleJson,
      publicKeyPem: cosignPub,
      expectedDigest: `sha256:${'0'.repeat(64)}`,
    });
    assert.equal(!replay.ok && replay.code, ErrorCode.SignatureDigestMismatch);
  });

  it('signs the same in-toto statement as cosign', () => {
    const envelope = (JSON.parse(bundleJson) as { dsseEnvelope: { payload: string } }).dsseEnvelope;
    assert.equal(
      signingStatement(digest).toString('utf8'),
      Buffer.from(envelope.payload, 'base64').toString('utf8'),
    );
  });

  it('writes the bundle referrer manifest byte for byte as cosign does', () => {
    const cosign = JSON.parse(referrerManifest.toString('utf8')) as {
      subject: { mediaType: string; size: number; digest: string };
      annotations: Record<string, string>;
    };
    const artifact = bundleReferrerArtifact({
      bundleJson,
      subject: cosign.subject,
      created: cosign.annotations['org.opencontainers.image.created']!,
    });
    assert.equal(
      Buffer.from(artifact.manifest).toString('utf8'),
      referrerManifest.toString('utf8'),
    );
  });
});
