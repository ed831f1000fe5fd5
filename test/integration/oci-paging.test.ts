// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/index.ts';
import {
  MediaType,
  buildArtifact,
  buildImage,
  createRegistryClient,
  pushImage,
  pushReferrer,
  type OciClientOptions,
} from '../../src/oci/index.ts';
import {
  startFakeRegistry,
  type FakeRegistry,
  type FakeRegistryOptions,
} from '../../src/testkit/fake-registry.ts';
import { rejectsWithCode } from '../../src/testkit/registry-conformance.ts';

const image = buildImage({ labels: { a: 'b' } });
const tagNames = (count: number): string[] => Array.from({ length: count }, (_, i) => `1.${i}.0`);

/** A fake registry holding `count` tags of one image in `acme/installer`. */
async function seeded(count: number, options: FakeRegistryOptions): Promise<FakeRegistry> {
  const fake = await startFakeRegistry(options);
  const client = createRegistryClient({ registry: fake.host, insecure: true });
  await pushImage(client, 'acme/installer', tagNames(count), image);
  await client.close();
  fake.requests.length = 0;
  return fake;
}

const fakes: FakeRegistry[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

async function listWith(
  fakeOptions: FakeRegistryOptions,
  count: number,
  clientOptions: Partial<OciClientOptions> = {},
): Promise<{ tags: string[]; paths: string[] }> {
  const fake = await seeded(count, fakeOptions);
  fakes.push(fake);
  const client = createRegistryClient({ registry: fake.host, insecure: true, ...clientOptions });
  try {
    const tags = await client.listTags('acme/installer');
    return {
      tags,
      paths: fake.requests.filter((r) => r.path.includes('/tags/list')).map((r) => r.path),
    };
  } finally {
    await client.close();
  }
}

describe('tag listing against a spec-exact registry', () => {
  it('follows relative Link headers until the last page and sorts the result', async () => {
    const { tags, paths } = await listWith({ tagPaging: { link: 'last' } }, 25, {
      tagPaging: { pageSize: 10 },
    });
    assert.deepEqual(tags, tagNames(25).sort());
    assert.equal(paths.length, 3);
    assert.match(paths[1] ?? '', /[?&]last=/);
  });

  it('treats the Link query as opaque (Quay-style next_page cursors)', async () => {
    const { tags, paths } = await listWith({ tagPaging: { link: 'opaque' } }, 25, {
      tagPaging: { pageSize: 10 },
    });
    assert.deepEqual(tags, tagNames(25).sort());
    assert.ok(paths.slice(1).every((p) => p.includes('next_page=') && !p.includes('last=')));
  });

  it('follows a Link when the registry serves fewer than n per page', async () => {
    const { tags, paths } = await listWith({ tagPaging: { link: 'last', maxPageSize: 4 } }, 10, {
      tagPaging: { pageSize: 100 },
    });
    assert.deepEqual(tags, tagNames(10).sort());
    assert.equal(paths.length, 3);
  });

  it('falls back to last= only when no Link came and exactly n tags came back', async () => {
    const { tags, paths } = await listWith({ tagPaging: { link: 'none' } }, 20, {
      tagPaging: { pageSize: 10 },
    });
    assert.deepEqual(tags, tagNames(20).sort());
    // 10 + 10 + an empty page that proves the end.
    assert.equal(paths.length, 3);
    const short = await listWith({ tagPaging: { link: 'none', maxPageSize: 7 } }, 20, {
      tagPaging: { pageSize: 10 },
    });
    assert.equal(
      short.tags.length,
      7,
      'fewer than n without a Link is the last page, per the spec',
    );
    assert.equal(short.paths.length, 1);
  });

  it('gives up past the page cap with MOLT_REGISTRY_PROTOCOL', async () => {
    const fake = await seeded(10, { tagPaging: { link: 'last', maxPageSize: 1 } });
    fakes.push(fake);
    const client = createRegistryClient({
      registry: fake.host,
      insecure: true,
      tagPaging: { maxPages: 3 },
    });
    await rejectsWithCode(
      client.listTags('acme/installer'),
      ErrorCode.RegistryProtocol,
      'acme/installer',
      '3 pages',
    );
    await client.close();
  });
});

describe('referrers', () => {
  const bundleType = 'application/vnd.dev.sigstore.bundle.v0.3+json';

  async function withReferrers(
    options: FakeRegistryOptions,
  ): Promise<{ fake: FakeRegistry; subject: string; sigs: string[]; sbom: string }> {
    const fake = await startFakeRegistry(options);
    fakes.push(fake);
    const client = createRegistryClient({ registry: fake.host, insecure: true });
    const subject = await pushImage(client, 'acme/installer', ['1.0.0'], image);
    const descriptor = {
      mediaType: MediaType.OciManifest,
      digest: subject,
      size: image.manifest.bytes.byteLength,
    };
    const sigs: string[] = [];
    for (const n of [1, 2, 3]) {
      const sig = buildArtifact({
        artifactType: bundleType,
        subject: descriptor,
        blobs: [{ mediaType: bundleType, bytes: new TextEncoder().encode(`{"n":${n}}`) }],
      });
      sigs.push(await pushImage(client, 'acme/installer', [], sig));
    }
    const sbom = await pushImage(
      client,
      'acme/installer',
      [],
      buildArtifact({ artifactType: 'application/spdx+json', subject: descriptor, blobs: [] }),
    );
    await client.close();
    return { fake, subject, sigs: sigs.sort(), sbom };
  }

  it('follows referrers pages and uses the server-side artifactType filter', async () => {
    const { fake, subject, sigs, sbom } = await withReferrers({ referrersPageSize: 2 });
    const client = createRegistryClient({ registry: fake.host, insecure: true });
    const all = await client.listReferrers('acme/installer', subject);
    assert.deepEqual(all.map((d) => d.digest).sort(), [...sigs, sbom].sort());
    const filtered = await client.listReferrers('acme/installer', subject, bundleType);
    assert.deepEqual(filtered.map((d) => d.digest).sort(), sigs);
    assert.ok(filtered.every((d) => d.artifactType === bundleType));
    assert.ok(
      fake.requests.some((r) => r.path.includes('artifactType=') && r.path.includes('page=1')),
    );
    await client.close();
  });

  it('falls back to the sha256-<hex> tag when the referrers API answers a plain-text 404', async () => {
    const { fake, subject } = await withReferrers({ referrersApi: false });
    const client = createRegistryClient({ registry: fake.host, insecure: true });
    assert.deepEqual(await client.listReferrers('acme/installer', subject), []);
    const tag = `sha256-${subject.slice('sha256:'.length)}`;
    assert.ok(fake.requests.some((r) => r.path.endsWith(`/manifests/${tag}`)));
    // pushReferrer maintains that tag on such registries, so readers find the artifact there.
    const descriptor = {
      mediaType: MediaType.OciManifest,
      digest: subject,
      size: image.manifest.bytes.byteLength,
    };
    const sig = buildArtifact({ artifactType: bundleType, subject: descriptor, blobs: [] });
    await pushReferrer(client, 'acme/installer', sig);
    const found = await client.listReferrers('acme/installer', subject, bundleType);
    assert.deepEqual(
      found.map((d) => d.digest),
      [sig.manifest.descriptor.digest],
    );
    assert.deepEqual(
      await client.listReferrers('acme/installer', subject, 'application/spdx+json'),
      [],
    );
    await client.close();
  });
});
