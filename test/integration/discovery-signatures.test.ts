// SPDX-License-Identifier: Apache-2.0
// Signature verdicts during discovery, on the real registry: which are cached and which re-checked.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRegistryClient, pushImage, type OciRegistryClient } from '../../src/oci/index.ts';
import {
  discoverReleases,
  InMemoryReleaseCache,
  type DiscoveryResult,
} from '../../src/releases/index.ts';
import {
  attachLegacySignature,
  generateKeyPair,
  signLegacy,
} from '../../src/releases/signatures/index.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';
import { releaseImage } from './discovery-fixtures.ts';

const repository = 'acme/signed';
const keys = generateKeyPair();
const otherKeys = generateKeyPair();

describe('discovery with a public key, on the real registry', () => {
  let registry: RunningRegistry;
  let writer: OciRegistryClient;
  let signedDigest: string;
  let laterDigest: string;
  const cache = new InMemoryReleaseCache();
  const readers: OciRegistryClient[] = [];

  const sign = async (digest: string): Promise<void> => {
    const signature = signLegacy({
      privateKeyPem: keys.privateKeyPem,
      digest,
      reference: `${registry.host}/${repository}`,
    });
    await attachLegacySignature({ client: writer, repository, digest, signature });
  };
  const scan = (publicKeyPem?: string): Promise<DiscoveryResult> => {
    const reader = createRegistryClient({ registry: registry.host, insecure: true });
    readers.push(reader);
    return discoverReleases({
      reader,
      repository,
      cache,
      ...(publicKeyPem !== undefined && { publicKeyPem }),
    });
  };
  const statuses = (r: DiscoveryResult): Record<string, string> =>
    Object.fromEntries(r.releases.map((x) => [x.tag, x.signature.status]));

  before(async () => {
    registry = await startRegistry();
    writer = createRegistryClient({ registry: registry.host, insecure: true });
    signedDigest = await pushImage(writer, repository, ['1.0.0'], releaseImage({ build: '1' }));
    laterDigest = await pushImage(writer, repository, ['1.1.0'], releaseImage({ build: '2' }));
    await sign(signedDigest);
  });
  after(async () => {
    for (const c of [writer, ...readers]) await c.close();
    await registry.stop();
  });

  it('leaves signatures unchecked, at no cost, without a key', async () => {
    const r = await scan();
    assert.deepEqual(statuses(r), { '1.0.0': 'unchecked', '1.1.0': 'unchecked' });
    const { manifestHead, manifestGet, blobGet, referrers } = r.requests;
    assert.deepEqual(
      { resolved: manifestHead + manifestGet, blobGet, referrers },
      { resolved: 2, blobGet: 2, referrers: 0 },
      'the two releases and their configs, no signature lookups',
    );
  });

  it('verifies with the key, caches only the verified verdict, and re-checks unsigned releases', async () => {
    const first = await scan(keys.publicKeyPem);
    assert.deepEqual(statuses(first), { '1.0.0': 'verified', '1.1.0': 'unsigned' });
    const second = await scan(keys.publicKeyPem);
    assert.deepEqual(statuses(second), statuses(first));
    const cost = (r: DiscoveryResult): number =>
      r.requests.manifestHead + r.requests.manifestGet + r.requests.blobGet + r.requests.referrers;
    assert.ok(
      cost(second) < cost(first),
      `the verified release is not checked again (${cost(second)} < ${cost(first)})`,
    );

    // A signature pushed after the image is found on the next scan: "unsigned" was not cached.
    await sign(laterDigest);
    const third = await scan(keys.publicKeyPem);
    assert.deepEqual(statuses(third), { '1.0.0': 'verified', '1.1.0': 'verified' });
  });

  it('never lets another key inherit a cached verdict', async () => {
    const r = await scan(otherKeys.publicKeyPem);
    assert.deepEqual(statuses(r), { '1.0.0': 'invalid', '1.1.0': 'invalid' });
  });
});
