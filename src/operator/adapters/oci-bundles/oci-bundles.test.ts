// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import {
  buildArtifact,
  createRegistryClient,
  pushImage,
  type OciRegistryClient,
} from '../../../oci/index.ts';
import { attachLegacySignature, generateKeyPair, signLegacy } from '../../../releases/index.ts';
import { startFakeRegistry, type FakeRegistry } from '../../../testkit/fake-registry.ts';
import { createOciBundleResolver } from './index.ts';

describe('Kubernetes bundles resolved in the registry', () => {
  let registry: FakeRegistry;
  let writer: OciRegistryClient;
  let digest: string;
  const push = (tag: string, text: string): Promise<string> => {
    const built = buildArtifact({
      artifactType: 'application/vnd.molt.kubernetes.bundle.v1',
      blobs: [{ mediaType: 'application/octet-stream', bytes: new TextEncoder().encode(text) }],
    });
    return pushImage(writer, 'acme/installer-kubernetes', [tag], built);
  };
  before(async () => {
    registry = await startFakeRegistry();
    writer = createRegistryClient({ registry: registry.url, insecure: true });
    digest = await push('v1.36.3', 'kube-apiserver');
  });
  after(async () => {
    await writer.close();
    await registry.close();
  });

  it('answers the tag as a reference by digest, and undefined for a version with no bundle', async () => {
    const r = createOciBundleResolver({ registry: registry.url, insecure: true });
    assert.equal(
      await r.resolve('acme/installer-kubernetes', 'v1.36.3'),
      `${registry.host}/acme/installer-kubernetes@${digest}`,
    );
    assert.equal(await r.resolve('acme/installer-kubernetes', 'v1.36.9'), undefined);
  });

  it('fails with the registry’s code rather than answering “no bundle” when it cannot ask', async () => {
    const r = createOciBundleResolver({ registry: '127.0.0.1:1', insecure: true });
    await assert.rejects(r.resolve('acme/installer-kubernetes', 'v1.36.3'), {
      code: 'MOLT_REGISTRY_UNREACHABLE',
    });
  });

  it('with the release key, answers only a bundle signed with it, as OS releases are', async () => {
    const fleet = generateKeyPair();
    const stranger = generateKeyPair();
    const repo = 'acme/installer-kubernetes';
    const sign = async (tag: string, privateKeyPem: string): Promise<string> => {
      const d = await push(tag, `kube-apiserver ${tag}`);
      const signature = signLegacy({
        privateKeyPem,
        digest: d,
        reference: `${registry.host}/${repo}`,
      });
      await attachLegacySignature({ client: writer, repository: repo, digest: d, signature });
      return d;
    };
    const signed = await sign('v1.36.4', fleet.privateKeyPem);
    await sign('v1.36.5', stranger.privateKeyPem);
    const r = createOciBundleResolver({
      registry: registry.url,
      insecure: true,
      publicKeyPem: fleet.publicKeyPem,
    });
    assert.equal(await r.resolve(repo, 'v1.36.4'), `${registry.host}/${repo}@${signed}`);
    await assert.rejects(r.resolve(repo, 'v1.36.3'), (e: unknown) =>
      isMoltError(e, ErrorCode.SignatureMissing),
    );
    await assert.rejects(r.resolve(repo, 'v1.36.5'), (e: unknown) =>
      isMoltError(e, ErrorCode.SignatureInvalid),
    );
    assert.equal(await r.resolve(repo, 'v1.36.9'), undefined, 'no bundle is still no bundle');

    // A plan's bundle is checked again before a pre-pull (the plan may predate the key).
    await r.verify(`${registry.host}/${repo}@${signed}`);
    await assert.rejects(r.verify(`${registry.host}/${repo}@${digest}`), (e: unknown) =>
      isMoltError(e, ErrorCode.SignatureMissing),
    );
    await assert.rejects(r.verify(`collector.example:5000/${repo}@${signed}`), (e: unknown) =>
      isMoltError(e, ErrorCode.KubeBundleRepositoryRefused),
    );
    const keyless = createOciBundleResolver({ registry: registry.url, insecure: true });
    await keyless.verify(`${registry.host}/${repo}@${digest}`);
  });
});
