// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import { bundleManifest, KubeBundleFormat, planBundle, type BundleBinary } from './bundle.ts';

const digest = (n: number): string => `sha256:${String(n).padStart(64, '0')}`;
const binaries: BundleBinary[] = [
  { name: 'kube-apiserver', digest: digest(1), size: 100 },
  { name: 'kube-controller-manager', digest: digest(2), size: 90 },
  { name: 'kube-scheduler', digest: digest(3), size: 70 },
  { name: 'kubectl', digest: digest(4), size: 60 },
];
const what = 'reg/k@sha256:…';
const manifest = (): Record<string, unknown> =>
  JSON.parse(JSON.stringify(bundleManifest('v1.36.3', binaries))) as Record<string, unknown>;
const invalid =
  (pattern: RegExp) =>
  (e: unknown): boolean =>
    isMoltError(e, ErrorCode.KubeBundleInvalid) && pattern.test(e.message);

describe('the Kubernetes bundle format', () => {
  it('reads back what the publisher builds', () => {
    const plan = planBundle(manifest(), { maxBytes: 1000, version: 'v1.36.3', what });
    assert.equal(plan.version, 'v1.36.3');
    assert.deepEqual(plan.binaries, binaries);
    assert.equal(plan.totalBytes, 320);
  });

  it('uses the OCI empty config, whose digest is the digest of {}', () => {
    const { emptyConfig } = KubeBundleFormat;
    assert.equal(emptyConfig.digest, `sha256:${createHash('sha256').update('{}').digest('hex')}`);
  });

  it('refuses another version than asked, a missing or malformed version', () => {
    assert.throws(
      () => planBundle(manifest(), { maxBytes: 1000, version: 'v1.35.4', what }),
      invalid(/holds Kubernetes v1\.36\.3, not v1\.35\.4/),
    );
    const m = manifest();
    m['annotations'] = { [KubeBundleFormat.versionAnnotation]: '1.36' };
    assert.throws(
      () => planBundle(m, { maxBytes: 1000, what }),
      invalid(/not a Kubernetes version/),
    );
  });

  it('refuses another artifact type, media type, or a layer that is not a binary', () => {
    const m1 = { ...manifest(), artifactType: 'application/vnd.example' };
    assert.throws(() => planBundle(m1, { maxBytes: 1000, what }), invalid(/artifactType/));
    const m2 = { ...manifest(), mediaType: 'application/vnd.oci.image.index.v1+json' };
    assert.throws(
      () => planBundle(m2, { maxBytes: 1000, what }),
      invalid(/not an OCI image manifest/),
    );
    const m3 = manifest();
    (m3['layers'] as Record<string, unknown>[])[1] = {
      mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
      digest: digest(2),
      size: 90,
    };
    assert.throws(
      () => planBundle(m3, { maxBytes: 1000, what }),
      invalid(/layer 1 has media type/),
    );
  });

  it('refuses unknown names, duplicates and a missing control-plane binary', () => {
    const named = (names: string[]) => ({
      ...manifest(),
      layers: names.map((n, i) => ({
        mediaType: KubeBundleFormat.binaryMediaType,
        digest: digest(i),
        size: 1,
        annotations: { [KubeBundleFormat.titleAnnotation]: n },
      })),
    });
    const all = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
    assert.throws(
      () => planBundle(named([...all, '../etc/passwd']), { maxBytes: 9, what }),
      invalid(/titled/),
    );
    assert.throws(
      () => planBundle(named([...all, 'kube-apiserver']), { maxBytes: 9, what }),
      invalid(/twice/),
    );
    assert.throws(
      () => planBundle(named(all.slice(0, 2)), { maxBytes: 9, what }),
      invalid(/no kube-scheduler/),
    );
    assert.equal(planBundle(named(all), { maxBytes: 9, what }).binaries.length, 3);
  });

  it('refuses a bundle over the machine’s size limit, from its descriptors', () => {
    assert.throws(
      () => planBundle(manifest(), { maxBytes: 319, what }),
      invalid(/over the 319-byte limit/),
    );
  });
});
