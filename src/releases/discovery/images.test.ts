// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MoveKind } from '../../core/releases/rebuilds.ts';
import { buildImage, buildIndex, pushImage } from '../../oci/index.ts';
import { useFakeRegistry } from '../../testkit/fake-registry-hooks.ts';
import { createImageScanner } from './images.ts';

const repo = 'acme/web';
/** A distinct single-platform image per build id. */
const image = (build: string, architecture = 'amd64') =>
  buildImage({
    labels: { build },
    platform: { os: 'linux', architecture },
    layers: [
      {
        mediaType: 'application/vnd.oci.image.layer.v1.tar',
        bytes: new TextEncoder().encode(build),
      },
    ],
  });

describe('image repository discovery', () => {
  const fake = useFakeRegistry();
  let clock = 1_000;
  const scanner = createImageScanner({ now: () => clock });
  const scan = () =>
    scanner.scan({ reader: fake.client(), registry: fake.registry().host, repository: repo });

  it('resolves the scheme tags, tells indexes and their platforms, and reads no blob', async () => {
    const single = await pushImage(
      fake.client(),
      repo,
      ['1.8.0', '1.8.0-rev1', '1.8.0-rev1-b1'],
      image('b1'),
    );
    const multi = await pushImage(
      fake.client(),
      repo,
      ['1.9.0', '1.9.0-rev1'],
      buildIndex([image('m1'), image('m1-arm', 'arm64')]),
    );
    await pushImage(fake.client(), repo, ['latest'], image('latest'));
    const first = await scan();
    assert.deepEqual(Object.fromEntries(first.tags), {
      '1.8.0': single,
      '1.8.0-rev1': single,
      '1.8.0-rev1-b1': single,
      '1.9.0': multi,
      '1.9.0-rev1': multi,
    });
    assert.deepEqual(Object.fromEntries(first.indexes), {
      [multi]: { platforms: ['linux/amd64', 'linux/arm64'], firstSeen: 1_000 },
    });
    assert.equal(first.requests.blobGet, 0);
    assert.deepEqual(first.moved, []);
  });

  it('costs the tag list and one HEAD per tag when nothing moved: no GET at all', async () => {
    clock = 2_000;
    const warm = await scan();
    assert.equal(warm.requests.blobGet, 0);
    assert.equal(warm.requests.manifestGet, 0);
    assert.equal(warm.requests.manifestHead, 5);
    assert.equal(warm.tags.size, 5);
  });

  it('sees a rebuild behind the intermediate tag, reading only the new digest’s manifest', async () => {
    clock = 3_000;
    const rebuilt = await pushImage(
      fake.client(),
      repo,
      ['1.8.0', '1.8.0-rev1', '1.8.0-rev1-b2'],
      image('b2'),
    );
    const r = await scan();
    assert.equal(r.tags.get('1.8.0-rev1'), rebuilt);
    assert.deepEqual(
      r.rebuilds.map((m) => m.tag),
      ['1.8.0', '1.8.0-rev1'],
    );
    assert.ok(r.moved.every((m) => m.kind === MoveKind.Rebuilt && m.to === rebuilt));
    assert.equal(r.requests.blobGet, 0);
    // The new long tag is read by GET (which also tells what the digest is); nothing else is.
    assert.equal(r.requests.manifestGet, 1);
  });

  it('keeps an index’s first sighting when a tag moves to it later', async () => {
    clock = 4_000;
    const [digest] = [...(await scan()).indexes.keys()];
    assert.ok(digest !== undefined);
    assert.equal((await scan()).indexes.get(digest)?.firstSeen, 1_000);
  });
});
