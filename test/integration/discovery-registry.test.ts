// SPDX-License-Identifier: Apache-2.0
// Discovery against the real Debian docker-registry 2.8.2 on loopback (reference/oci-discovery.md §3.1).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMoltError } from '../../src/core/errors.ts';
import { createRegistryClient, pushImage, type OciRegistryClient } from '../../src/oci/index.ts';
import {
  discoverReleases,
  FileReleaseCache,
  InMemoryReleaseCache,
  type DiscoveryResult,
} from '../../src/releases/index.ts';
import { freePort } from '../../src/platform/process/free-port.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';
import { releaseImage, seedRepository, type Seeded } from './discovery-fixtures.ts';

const repository = 'acme/installer';

describe('discovery on the real registry', () => {
  let registry: RunningRegistry;
  let dir: { path: string; remove: () => Promise<void> };
  let seeded: Seeded;
  const clients: OciRegistryClient[] = [];
  /** A fresh client each time: a new process, as far as the registry and the counters go. */
  const client = (): OciRegistryClient => {
    const c = createRegistryClient({ registry: registry.host, insecure: true });
    clients.push(c);
    return c;
  };
  const scan = (
    cachePath: string,
    more: Partial<Parameters<typeof discoverReleases>[0]> = {},
  ): Promise<DiscoveryResult> =>
    discoverReleases({
      reader: client(),
      repository,
      registry: registry.host,
      cache: new FileReleaseCache(cachePath),
      ...more,
    });

  before(async () => {
    registry = await startRegistry();
    dir = await tempDir('discovery');
    seeded = await seedRepository(client(), repository);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await registry.stop();
    await dir.remove();
  });

  it('groups tags by digest into releases, newest first, with every tag as an alias', async () => {
    const progress: string[] = [];
    const r = await scan(join(dir.path, 'group.json'), {
      onProgress: (p) => progress.push(`${p.phase} ${p.done}/${p.total}`),
    });
    assert.deepEqual([...new Set(progress.map((p) => p.split(' ')[0]))].slice(0, 2), [
      'list',
      'head',
    ]);
    assert.ok(progress.includes('head 11/11'), progress.join(', '));
    const byDigest = new Map(r.releases.map((x) => [x.digest, x]));
    assert.deepEqual(
      r.releases.map((x) => x.tag),
      ['1.10.0', 'v1.9.0-rev1', '1.8.0-rev2-b101', '1.8.0-rev1-b100'],
    );
    assert.deepEqual(byDigest.get(seeded.rev2)?.tags, ['1.8.0-rev2-b101', '1.8.0-rev2', '1.8.0']);
    assert.deepEqual(byDigest.get(seeded.v190)?.tags, ['v1.9.0-rev1', '1.9.0']);
    assert.equal(byDigest.get(seeded.v190)?.kubernetes, '>=1.30.0 <1.33.0');
    assert.equal(
      byDigest.get(seeded.multi)?.digest,
      seeded.multi,
      'an index is identified by the index digest',
    );
    assert.deepEqual(
      byDigest.get(seeded.multi)?.channels,
      ['stable'],
      'labels of linux/amd64 by default',
    );
    assert.equal(byDigest.get(seeded.rev1)?.signature.status, 'unchecked');
  });

  it('falls back to the most specific tag when the version label is absent', async () => {
    const r = await scan(join(dir.path, 'version.json'));
    const versions = new Map(r.releases.map((x) => [x.digest, x.version]));
    assert.equal(versions.get(seeded.rev1), '1.8.0-rev1-b100');
    assert.equal(versions.get(seeded.v190), '1.9.0');
  });

  it('skips unparseable tags and broken releases with codes and reasons, and finds the rest', async () => {
    const r = await scan(join(dir.path, 'skips.json'));
    const codes = Object.fromEntries(r.skipped.map((s) => [s.tag, s.code]));
    assert.deepEqual(codes, {
      latest: 'MOLT_TAG_NOT_VERSION',
      nightly: 'MOLT_TAG_NOT_VERSION',
      [`sha256-${'e'.repeat(64)}.sig`]: 'MOLT_TAG_ARTIFACT',
      '1.9.0-rev02': 'MOLT_INVALID_TAG',
      '2.0.0-rev1': 'MOLT_CONFIG_INVALID',
      '1.7.0': 'MOLT_INVALID_RANGE',
    });
    const broken = r.skipped.find((s) => s.code === 'MOLT_CONFIG_INVALID');
    assert.equal(broken?.digest, seeded.broken);
    assert.ok(r.skipped.every((s) => s.reason.length > 0));
    assert.equal(r.releases.length, 4);
  });

  it('reads the labels of the requested platform from a multi-platform release', async () => {
    const r = await scan(join(dir.path, 'arm.json'), {
      platform: { os: 'linux', architecture: 'arm64' },
    });
    assert.deepEqual(r.releases.find((x) => x.digest === seeded.multi)?.channels, ['beta']);
    const missing = r.skipped.find((s) => s.digest === seeded.rev1);
    assert.equal(
      missing?.code,
      'MOLT_PLATFORM_NOT_FOUND',
      'a single-platform amd64 image has no arm64 variant',
    );
  });

  it('re-scans with a reloaded cache file and a new client without any manifest or blob GET', async () => {
    const path = join(dir.path, 'warm.json');
    const cold = await scan(path);
    assert.ok(cold.requests.manifestGet > 0 && cold.requests.blobGet > 0);
    const reader = client();
    const warm = await discoverReleases({
      reader,
      repository,
      registry: registry.host,
      cache: new FileReleaseCache(path),
    });
    assert.equal(reader.stats.manifestGet, 0);
    assert.equal(reader.stats.blobGet, 0);
    assert.deepEqual(warm.requests, reader.stats);
    assert.equal(warm.requests.tagList, 1);
    assert.equal(warm.requests.manifestHead, 11, 'one HEAD per parseable tag, every scan');
    assert.ok(
      cold.requests.manifestHead < 11,
      "a new release's first tag is resolved by its manifest GET, not a HEAD",
    );
    assert.deepEqual(warm.releases, cold.releases);
    assert.deepEqual(warm.skipped, cold.skipped, 'negative results come from the cache too');
    assert.deepEqual(warm.warnings, []);
  });

  it('reports a corrupt cache file, rebuilds it, and is warm again afterwards', async () => {
    const path = join(dir.path, 'corrupt.json');
    await scan(path);
    await writeFile(path, (await readFile(path, 'utf8')).slice(0, 100));
    const rebuilt = await scan(path);
    assert.deepEqual(
      rebuilt.warnings.map((w) => w.code),
      ['MOLT_CACHE_CORRUPT'],
    );
    assert.ok(rebuilt.requests.blobGet > 0, 'metadata was fetched again');
    assert.equal(rebuilt.releases.length, 4);
    const warm = await scan(path);
    assert.deepEqual(warm.warnings, []);
    assert.equal(warm.requests.manifestGet + warm.requests.blobGet, 0);
  });

  it('fails with the registry error, and leaves the cache alone, when the registry is unreachable', async () => {
    const cache = new InMemoryReleaseCache();
    const reader = createRegistryClient({
      registry: `127.0.0.1:${await freePort()}`,
      insecure: true,
      retries: 0,
    });
    clients.push(reader);
    await assert.rejects(discoverReleases({ reader, repository, cache }), (e) =>
      isMoltError(e, 'MOLT_REGISTRY_UNREACHABLE'),
    );
    assert.deepEqual(await cache.load('/acme/installer'), {
      state: { tags: {}, images: {}, signatures: {} },
      warnings: [],
    });
  });

  // Last: it changes the repository the other tests read.
  it('detects a rebuild under an existing -rev tag and finds the new digest with one image fetch', async () => {
    const path = join(dir.path, 'rebuild.json');
    await scan(path);
    const rebuilt = await pushImage(
      client(),
      repository,
      ['1.8.0', '1.8.0-rev2', '1.8.0-rev2-b102'],
      releaseImage({ build: '102' }),
    );
    const r = await scan(path);
    assert.deepEqual(
      r.rebuilds.map((m) => [m.tag, m.from, m.to]),
      [
        ['1.8.0', seeded.rev2, rebuilt],
        ['1.8.0-rev2', seeded.rev2, rebuilt],
      ],
    );
    const fresh = r.releases.find((x) => x.digest === rebuilt);
    assert.deepEqual(fresh?.tags, ['1.8.0-rev2-b102', '1.8.0-rev2', '1.8.0']);
    assert.deepEqual(
      r.releases.find((x) => x.digest === seeded.rev2)?.tags,
      ['1.8.0-rev2-b101'],
      'the old build keeps its long tag',
    );
    assert.equal(r.requests.manifestGet, 1);
    assert.equal(r.requests.blobGet, 1);
  });
});
