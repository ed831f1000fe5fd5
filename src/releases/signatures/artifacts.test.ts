// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  bundleReferrerArtifact,
  legacySignatureArtifact,
  legacySignatureTag,
  SignatureAnnotation,
  SimpleSigningMediaType,
} from './artifacts.ts';
import { BundleMediaType, createBundle } from './bundle.ts';
import { generateKeyPair } from './keys.ts';
import { signLegacy } from './legacy.ts';

const sha256 = (b: Uint8Array): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const digest = `sha256:${'ab'.repeat(32)}`;
const keys = generateKeyPair();

interface Manifest {
  schemaVersion: number;
  mediaType: string;
  artifactType?: string;
  config: { mediaType: string; digest: string; size: number };
  layers: {
    mediaType: string;
    digest: string;
    size: number;
    annotations?: Record<string, string>;
  }[];
  subject?: { mediaType: string; digest: string; size: number };
  annotations?: Record<string, string>;
}

const json = (b: Uint8Array): unknown => JSON.parse(Buffer.from(b).toString('utf8'));

describe('signature artifact layouts', () => {
  it('names the legacy signature tag after the digest', () => {
    assert.equal(legacySignatureTag(digest), `sha256-${'ab'.repeat(32)}.sig`);
  });

  it('lays out a legacy .sig manifest as cosign does', () => {
    const sig = signLegacy({ privateKeyPem: keys.privateKeyPem, digest, reference: 'r/x' });
    const art = legacySignatureArtifact([sig]);
    const m = json(art.manifest) as Manifest;
    assert.equal(art.digest, sha256(art.manifest));
    assert.equal(m.mediaType, 'application/vnd.oci.image.manifest.v1+json');
    assert.equal(m.config.mediaType, 'application/vnd.oci.image.config.v1+json');
    assert.deepEqual(m.layers, [
      {
        mediaType: SimpleSigningMediaType,
        digest: sha256(sig.payload),
        size: sig.payload.length,
        annotations: { [SignatureAnnotation]: sig.signatureB64 },
      },
    ]);
    const config = art.config;
    assert.equal(m.config.digest, config.descriptor.digest);
    // 233 bytes: the size of the config of every single-signature cosign .sig image in the wild.
    assert.equal(config.bytes.length, 233);
    assert.deepEqual((json(config.bytes) as { rootfs: unknown }).rootfs, {
      type: 'layers',
      diff_ids: [sha256(sig.payload)],
    });
    for (const b of [art.config, ...art.layers]) assert.equal(b.descriptor.digest, sha256(b.bytes));
  });

  it('lays out a bundle referrer as cosign v3 does', () => {
    const bundleJson = createBundle({ privateKeyPem: keys.privateKeyPem, digest });
    const subject = { mediaType: 'application/vnd.oci.image.index.v1+json', digest, size: 856 };
    const art = bundleReferrerArtifact({ bundleJson, subject, created: '2026-01-01T00:00:00Z' });
    const m = json(art.manifest) as Manifest;
    assert.equal(m.artifactType, BundleMediaType);
    assert.deepEqual(m.config, {
      mediaType: 'application/vnd.oci.empty.v1+json',
      digest: 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
      size: 2,
      artifactType: BundleMediaType,
    });
    assert.deepEqual(m.subject, subject);
    const bundleDigest = sha256(Buffer.from(bundleJson));
    assert.deepEqual(m.layers, [
      { mediaType: BundleMediaType, digest: bundleDigest, size: Buffer.byteLength(bundleJson) },
    ]);
    assert.deepEqual(m.annotations, {
      'dev.sigstore.bundle.content': 'dsse-envelope',
      'dev.sigstore.bundle.predicateType': 'https://sigstore.dev/cosign/sign/v1',
      'org.opencontainers.image.created': '2026-01-01T00:00:00Z',
    });
  });
});
