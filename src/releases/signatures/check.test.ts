// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ErrorCode, isMoltError, MoltError } from '../../protocol/index.ts';
import type { Descriptor, FetchedManifest, RegistryReader, RequestStats } from '../../oci/types.ts';
import {
  bundleReferrerArtifact,
  legacySignatureArtifact,
  legacySignatureTag,
  type ArtifactLayout,
} from './artifacts.ts';
import { BundleMediaType, createBundle } from './bundle.ts';
import { checkSignature } from './check.ts';
import { generateKeyPair } from './keys.ts';
import { signLegacy } from './legacy.ts';

const sha256 = (b: Uint8Array): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const digest = `sha256:${'ab'.repeat(32)}`;
const repo = 'molt/installer';
const keys = generateKeyPair();
const otherKeys = generateKeyPair();
const subject = { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest, size: 500 };

/**
 * An in-memory RegistryReader holding manifests, blobs and tags, with the referrers computed from
 * manifests' `subject` (like a registry with the referrers API). `fail` makes reads throw.
 */
class MemoryRegistry implements RegistryReader {
  readonly stats = {} as RequestStats;
  readonly manifests = new Map<string, Uint8Array>();
  readonly blobs = new Map<string, Uint8Array>();
  readonly tags = new Map<string, string>();
  fail: MoltError | undefined;

  add(artifact: ArtifactLayout, tag?: string): this {
    for (const b of [artifact.config, ...artifact.layers])
      this.blobs.set(b.descriptor.digest, b.bytes);
    this.manifests.set(artifact.digest, artifact.manifest);
    if (tag !== undefined) this.tags.set(tag, artifact.digest);
    return this;
  }
  ping(): Promise<void> {
    return Promise.resolve();
  }
  listTags(): Promise<string[]> {
    return Promise.resolve([...this.tags.keys()].sort());
  }
  headManifest(_repo: string, ref: string): Promise<Descriptor | undefined> {
    const d = this.tags.get(ref) ?? ref;
    const m = this.manifests.get(d);
    return Promise.resolve(
      m && { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: d, size: m.length },
    );
  }
  getManifest(_repo: string, ref: string): Promise<FetchedManifest> {
    if (this.fail) return Promise.reject(this.fail);
    const d = this.tags.get(ref) ?? ref;
    const bytes = this.manifests.get(d);
    if (!bytes)
      return Promise.reject(new MoltError(ErrorCode.RegistryNotFound, `no manifest ${ref}`));
    return Promise.resolve({
      digest: d,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      bytes,
      json: JSON.parse(Buffer.from(bytes).toString()) as unknown,
    });
  }
  resolveImage(): never {
    throw new Error('not used');
  }
  getBlob(_repo: string, d: string): Promise<Uint8Array> {
    const bytes = this.blobs.get(d);
    if (!bytes) return Promise.reject(new MoltError(ErrorCode.RegistryNotFound, `no blob ${d}`));
    if (sha256(bytes) !== d)
      return Promise.reject(new MoltError(ErrorCode.DigestMismatch, `blob ${d} does not match`));
    return Promise.resolve(bytes);
  }
  streamBlob(): never {
    throw new Error('not used');
  }
  listReferrers(_repo: string, d: string): Promise<Descriptor[]> {
    const out: Descriptor[] = [];
    for (const [md, bytes] of this.manifests) {
      const m = JSON.parse(Buffer.from(bytes).toString()) as {
        subject?: { digest: string };
        artifactType?: string;
      };
      if (m.subject?.digest === d)
        out.push({
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: md,
          size: bytes.length,
          ...(m.artifactType ? { artifactType: m.artifactType } : {}),
        });
    }
    return Promise.resolve(out);
  }
}

const legacy = (privateKeyPem: string, d = digest): ArtifactLayout =>
  legacySignatureArtifact([
    signLegacy({ privateKeyPem, digest: d, reference: `localhost/${repo}` }),
  ]);
const bundle = (privateKeyPem: string): ArtifactLayout =>
  bundleReferrerArtifact({ bundleJson: createBundle({ privateKeyPem, digest }), subject });
const check = (reader: RegistryReader): ReturnType<typeof checkSignature> =>
  checkSignature({ reader, repository: repo, digest, publicKeyPem: keys.publicKeyPem });

describe('checkSignature', () => {
  it('reports a release without signatures as unsigned', async () => {
    assert.deepEqual(await check(new MemoryRegistry()), { status: 'unsigned' });
  });

  it('verifies a legacy .sig signature', async () => {
    const reg = new MemoryRegistry().add(legacy(keys.privateKeyPem), legacySignatureTag(digest));
    assert.deepEqual(await check(reg), { status: 'verified', format: 'cosign-legacy' });
  });

  it('verifies a bundle referrer', async () => {
    const reg = new MemoryRegistry().add(bundle(keys.privateKeyPem));
    assert.deepEqual(await check(reg), { status: 'verified', format: 'sigstore-bundle' });
  });

  it('reports signatures made with another key as invalid, with every reason', async () => {
    const reg = new MemoryRegistry()
      .add(legacy(otherKeys.privateKeyPem), legacySignatureTag(digest))
      .add(bundle(otherKeys.privateKeyPem));
    const state = await check(reg);
    assert.equal(state.status, 'invalid');
    assert.match(
      state.reason,
      /^2 signature\(s\), none verified: MOLT_SIGNATURE_INVALID: .*; MOLT_SIGNATURE_INVALID: /,
    );
  });

  it('accepts a release when any one of several signatures verifies', async () => {
    const both = legacySignatureArtifact([
      signLegacy({ privateKeyPem: otherKeys.privateKeyPem, digest, reference: repo }),
      signLegacy({ privateKeyPem: keys.privateKeyPem, digest, reference: repo }),
    ]);
    const reg = new MemoryRegistry().add(both, legacySignatureTag(digest));
    assert.deepEqual(await check(reg), { status: 'verified', format: 'cosign-legacy' });
  });

  it('treats a signature blob whose bytes do not match its digest as invalid', async () => {
    const art = legacy(keys.privateKeyPem);
    const reg = new MemoryRegistry().add(art, legacySignatureTag(digest));
    const layer = art.layers[0]!.descriptor.digest;
    reg.blobs.set(layer, Buffer.from('{"critical":{}}'));
    const state = await check(reg);
    assert.equal(state.status, 'invalid');
    assert.match(state.reason, /MOLT_SIGNATURE_MALFORMED: blob .* does not match/);
  });

  it('treats a .sig manifest without simple-signing layers as invalid', async () => {
    const reg = new MemoryRegistry().add(legacySignatureArtifact([]), legacySignatureTag(digest));
    assert.equal((await check(reg)).status, 'invalid');
  });

  it('ignores referrers of other artifact types', async () => {
    const sbom = bundleReferrerArtifact({ bundleJson: '{}', subject });
    const json = JSON.parse(Buffer.from(sbom.manifest).toString()) as Record<string, unknown>;
    json['artifactType'] = 'application/spdx+json';
    const bytes = Buffer.from(JSON.stringify(json));
    const reg = new MemoryRegistry().add({ ...sbom, manifest: bytes, digest: sha256(bytes) });
    assert.deepEqual(await check(reg), { status: 'unsigned' });
  });

  it('rethrows registry outages instead of calling the release unsigned or invalid', async () => {
    const reg = new MemoryRegistry().add(legacy(keys.privateKeyPem), legacySignatureTag(digest));
    reg.fail = new MoltError(ErrorCode.RegistryUnreachable, 'connection refused', {
      retryable: true,
    });
    await assert.rejects(check(reg), (e) => isMoltError(e, ErrorCode.RegistryUnreachable));
  });

  it('throws MOLT_PUBLIC_KEY_INVALID before any request for a bad key', async () => {
    await assert.rejects(
      checkSignature({
        reader: new MemoryRegistry(),
        repository: repo,
        digest,
        publicKeyPem: 'nope',
      }),
      (e) => isMoltError(e, ErrorCode.PublicKeyInvalid),
    );
  });

  it('uses the bundle media type as the referrer artifact type', () => {
    const json = JSON.parse(Buffer.from(bundle(keys.privateKeyPem).manifest).toString()) as {
      artifactType: string;
    };
    assert.equal(json.artifactType, BundleMediaType);
  });
});
