// SPDX-License-Identifier: Apache-2.0
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildImage,
  createRegistryClient,
  pushImage,
  type OciRegistryClient,
} from '../../src/oci/index.ts';
import type { Descriptor } from '../../src/oci/types.ts';
import {
  attachBundle,
  attachLegacySignature,
  checkSignature,
  createBundle,
  generateKeyPair,
  legacySignatureTag,
  signLegacy,
} from '../../src/releases/signatures/index.ts';
import { startFakeRegistry, type FakeRegistry } from '../../src/testkit/fake-registry.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

const repo = 'molt/installer';
const keys = generateKeyPair();
const otherKeys = generateKeyPair();

/** Push a small distinct image under `tag` and return its manifest descriptor. */
async function pushRelease(client: OciRegistryClient, tag: string): Promise<Descriptor> {
  const built = buildImage({
    labels: { 'org.opencontainers.image.version': tag },
    layers: [
      {
        mediaType: 'application/vnd.oci.image.layer.v1.tar',
        bytes: new TextEncoder().encode(`release ${tag}`),
      },
    ],
  });
  await pushImage(client, repo, [tag], built);
  return built.manifest.descriptor;
}

async function legacySign(
  client: OciRegistryClient,
  host: string,
  release: Descriptor,
  privateKeyPem: string,
): Promise<void> {
  const signature = signLegacy({
    privateKeyPem,
    digest: release.digest,
    reference: `${host}/${repo}`,
  });
  await attachLegacySignature({ client, repository: repo, digest: release.digest, signature });
}

async function bundleSign(
  client: OciRegistryClient,
  release: Descriptor,
  privateKeyPem: string,
): Promise<void> {
  const bundleJson = createBundle({ privateKeyPem, digest: release.digest });
  await attachBundle({
    client,
    repository: repo,
    bundleJson,
    subject: release,
    created: '2026-01-01T00:00:00Z',
  });
}

const check = (client: OciRegistryClient, release: Descriptor): ReturnType<typeof checkSignature> =>
  checkSignature({
    reader: client,
    repository: repo,
    digest: release.digest,
    publicKeyPem: keys.publicKeyPem,
  });

describe('signatures on a real docker-registry 2.8.2', () => {
  let registry: RunningRegistry;
  let client: OciRegistryClient;
  before(async () => {
    registry = await startRegistry();
    client = createRegistryClient({ registry: registry.host, insecure: true });
  });
  after(async () => {
    await client.close();
    await registry.stop();
  });

  it('verifies a release signed in the cosign legacy format', async () => {
    const release = await pushRelease(client, '1.0.0');
    await legacySign(client, registry.host, release, keys.privateKeyPem);
    assert.ok((await client.listTags(repo)).includes(legacySignatureTag(release.digest)));
    assert.deepEqual(await check(client, release), { status: 'verified', format: 'cosign-legacy' });
  });

  it('reports a release without signatures as unsigned', async () => {
    const release = await pushRelease(client, '1.0.1');
    assert.deepEqual(await check(client, release), { status: 'unsigned' });
  });

  it('reports a release signed with another key as invalid', async () => {
    const release = await pushRelease(client, '1.0.2');
    await legacySign(client, registry.host, release, otherKeys.privateKeyPem);
    const state = await check(client, release);
    assert.equal(state.status, 'invalid');
    assert.match(state.reason, /MOLT_SIGNATURE_INVALID/);
  });

  it('keeps earlier signatures when a second signer adds one, and verifies with either key', async () => {
    const release = await pushRelease(client, '1.0.3');
    await legacySign(client, registry.host, release, otherKeys.privateKeyPem);
    // The same signature attached twice (a retried publish) is stored once.
    const signature = signLegacy({
      privateKeyPem: keys.privateKeyPem,
      digest: release.digest,
      reference: `${registry.host}/${repo}`,
    });
    await attachLegacySignature({ client, repository: repo, digest: release.digest, signature });
    await attachLegacySignature({ client, repository: repo, digest: release.digest, signature });
    const sig = await client.getManifest(repo, legacySignatureTag(release.digest));
    assert.equal((sig.json as { layers: unknown[] }).layers.length, 2);
    assert.deepEqual(await check(client, release), { status: 'verified', format: 'cosign-legacy' });
    const withOther = await checkSignature({
      reader: client,
      repository: repo,
      digest: release.digest,
      publicKeyPem: otherKeys.publicKeyPem,
    });
    assert.equal(withOther.status, 'verified');
  });

  it('finds a bundle referrer through the referrers tag schema (no referrers API here)', async () => {
    const release = await pushRelease(client, '1.0.4');
    await bundleSign(client, release, keys.privateKeyPem);
    assert.deepEqual(await check(client, release), {
      status: 'verified',
      format: 'sigstore-bundle',
    });
  });
});

describe('signatures as OCI 1.1 referrers on a registry with the referrers API', () => {
  let registry: FakeRegistry;
  let client: OciRegistryClient;
  before(async () => {
    registry = await startFakeRegistry();
    client = createRegistryClient({ registry: registry.host, insecure: true });
  });
  after(async () => {
    await client.close();
    await registry.close();
  });

  it('verifies a release signed with a Sigstore bundle referrer', async () => {
    const release = await pushRelease(client, '2.0.0');
    await bundleSign(client, release, keys.privateKeyPem);
    assert.ok(registry.requests.some((r) => r.path.startsWith(`/v2/${repo}/referrers/`)));
    assert.deepEqual(await check(client, release), {
      status: 'verified',
      format: 'sigstore-bundle',
    });
  });

  it('reports a release without referrers as unsigned', async () => {
    const release = await pushRelease(client, '2.0.1');
    assert.deepEqual(await check(client, release), { status: 'unsigned' });
  });

  it('reports a bundle signed with another key as invalid', async () => {
    const release = await pushRelease(client, '2.0.2');
    await bundleSign(client, release, otherKeys.privateKeyPem);
    const state = await check(client, release);
    assert.equal(state.status, 'invalid');
    assert.match(state.reason, /MOLT_SIGNATURE_INVALID/);
  });

  it("does not accept a bundle for another release as this release's signature", async () => {
    const signed = await pushRelease(client, '2.0.3');
    const target = await pushRelease(client, '2.0.4');
    // A genuine bundle for `signed`, attached to `target`: a replay.
    const bundleJson = createBundle({ privateKeyPem: keys.privateKeyPem, digest: signed.digest });
    await attachBundle({ client, repository: repo, bundleJson, subject: target });
    const state = await check(client, target);
    assert.equal(state.status, 'invalid');
    assert.match(state.reason, /MOLT_SIGNATURE_DIGEST_MISMATCH/);
  });
});
