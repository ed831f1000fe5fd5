// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildArtifact, createRegistryClient, pushImage } from '../../../oci/index.ts';
import { startFakeRegistry, type FakeRegistry } from '../../../testkit/fake-registry.ts';
import { createOciBundleResolver } from './index.ts';

describe('Kubernetes bundles resolved in the registry', () => {
  let registry: FakeRegistry;
  let digest: string;
  before(async () => {
    registry = await startFakeRegistry();
    const writer = createRegistryClient({ registry: registry.url, insecure: true });
    const built = buildArtifact({
      artifactType: 'application/vnd.molt.kubernetes.bundle.v1',
      blobs: [
        {
          mediaType: 'application/octet-stream',
          bytes: new TextEncoder().encode('kube-apiserver'),
        },
      ],
    });
    digest = await pushImage(writer, 'acme/installer-kubernetes', ['v1.36.3'], built);
    await writer.close();
  });
  after(() => registry.close());

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
});
