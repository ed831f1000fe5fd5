// SPDX-License-Identifier: Apache-2.0
// The composition of image policies: the live policies the declared runner sets, and the scan of a
// followed repository over a registry client of its own host (plain HTTP on loopback).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { policy } from '../core/images/fixtures.test.ts';
import { buildImage, isLoopbackHost, pushImage } from '../oci/index.ts';
import { useFakeRegistry } from '../testkit/fake-registry-hooks.ts';
import { MemoryOperatorStore } from './adapters/memory-store/operator-store.ts';
import { declaredRunner } from './compose-declared.ts';
import { liveImages, repositoryScanner, splitRepository } from './compose-images.ts';
import type { LoadedConfig } from './config.ts';
import type { DeclaredSource } from './ports/declared.ts';

/** Only what the image composition reads of a loaded config. */
const config = (
  o: { images?: unknown[]; registry?: string; insecure?: boolean } = {},
): LoadedConfig =>
  ({
    fleet: { images: o.images },
    config: { registry: o.registry ?? 'registry.example.com', insecure: o.insecure ?? false },
  }) as unknown as LoadedConfig;

describe('the live image policies', () => {
  it('are the fleet file’s until the declared runner sets the file’s and the accepted objects’', async () => {
    const file = policy({ name: 'web' });
    const live = liveImages(config({ images: [file] }));
    assert.deepEqual(
      live.policies().map((p) => p.name),
      ['web'],
    );
    const object = policy({ name: 'dns', repository: 'registry.example.com/acme/dns' });
    const source: DeclaredSource = {
      read: () =>
        Promise.resolve({
          pools: [],
          holds: [],
          requests: [],
          images: [{ name: 'dns', policy: object, generation: 1 }],
        }),
      report: () => Promise.resolve(),
      release: () => Promise.resolve(),
      objectName: (id) => id,
      warn: () => Promise.resolve(),
    };
    const lines: string[] = [];
    const runner = declaredRunner({
      source,
      filePools: [],
      fileMachines: new Set(),
      setPools: () => undefined,
      store: new MemoryOperatorStore(),
      log: (l) => lines.push(l),
      fileImages: live.fileImages,
      setImages: live.setImages,
    });
    await runner.refresh();
    assert.deepEqual(lines, []);
    assert.deepEqual(
      live
        .policies()
        .map((p) => p.name)
        .sort(),
      ['dns', 'web'],
    );
  });
});

describe('the host of a followed repository', () => {
  it('is split off the path; loopback hosts (the one test the client uses) are told apart', () => {
    assert.deepEqual(splitRepository('127.0.0.1:5000/acme/web'), {
      host: '127.0.0.1:5000',
      path: 'acme/web',
    });
    for (const h of ['localhost', 'localhost:5000', '127.0.0.1:5000', '127.1.2.3', '[::1]:5000'])
      assert.equal(isLoopbackHost(h), true, h);
    for (const h of ['registry.example.com', '10.0.0.1:5000', '127.example.com', '[::2]:5000'])
      assert.equal(isLoopbackHost(h), false, h);
  });
});

describe('the repository scanner', () => {
  const fake = useFakeRegistry();

  it('scans a loopback registry over plain HTTP with a client of its own, warm the second time', async () => {
    const image = buildImage({
      labels: { build: 'b1' },
      platform: { os: 'linux', architecture: 'amd64' },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', bytes: new Uint8Array([1]) }],
    });
    const digest = await pushImage(
      fake.client(),
      'acme/web',
      ['1.8.0-rev1', '1.8.0-rev1-b1'],
      image,
    );
    const scan = repositoryScanner(config(), () => 1_000);
    const first = await scan(`${fake.registry().host}/acme/web`);
    assert.deepEqual(Object.fromEntries(first.tags), {
      '1.8.0-rev1': digest,
      '1.8.0-rev1-b1': digest,
    });
    const warm = await scan(`${fake.registry().host}/acme/web`);
    assert.equal(warm.requests.manifestGet, 0);
  });
  it('answers two scans of one repository asked together with one scan (P12: cold scans side by side)', async () => {
    const image = buildImage({ labels: { build: 'c1' } });
    await pushImage(fake.client(), 'acme/twice', ['2.0.0-rev1', '2.0.0-rev1-b1'], image);
    const scan = repositoryScanner(config(), () => 1_000);
    const [a, b] = await Promise.all([
      scan(`${fake.registry().host}/acme/twice`),
      scan(`${fake.registry().host}/acme/twice`),
    ]);
    assert.equal(a, b, 'the same answer');
    assert.equal(a.requests.tagList, 1);
    const later = await scan(`${fake.registry().host}/acme/twice`);
    assert.notEqual(later, a, 'a scan asked after it ended is a new one');
  });
});
