// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { sha256Digest } from './digest.ts';
import { buildImage, buildIndex } from './image.ts';
import { MediaType } from './media-types.ts';
import { parseImageManifest, parseIndex, selectPlatform } from './manifest.ts';
import { ErrorCode, isMoltError } from '../protocol/index.ts';

describe('buildImage', () => {
  it('is deterministic and its descriptors match its bytes', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.string()),
        fc.uint8Array({ maxLength: 64 }),
        (labels, bytes) => {
          const spec = {
            labels,
            layers: [{ mediaType: MediaType.OciLayer, bytes }],
            created: '2025-01-01T00:00:00Z',
          };
          const a = buildImage(spec);
          assert.deepEqual(buildImage(spec).manifest.descriptor, a.manifest.descriptor);
          for (const b of [a.config, a.manifest, ...a.layers])
            assert.equal(b.descriptor.digest, sha256Digest(b.bytes));
          const manifest = parseImageManifest(
            JSON.parse(Buffer.from(a.manifest.bytes).toString()),
            'm',
          );
          assert.deepEqual(manifest.config, a.config.descriptor);
          const config = JSON.parse(Buffer.from(a.config.bytes).toString()) as {
            config: { Labels: Record<string, string> };
          };
          assert.deepEqual(config.config.Labels, { ...labels });
        },
      ),
    );
  });

  it('writes the run config a runtime reads, and leaves an image without one as it was', () => {
    const configOf = (spec: Parameters<typeof buildImage>[0]): Record<string, unknown> =>
      (
        JSON.parse(Buffer.from(buildImage(spec).config.bytes).toString()) as {
          config: Record<string, unknown>;
        }
      ).config;
    assert.deepEqual(
      configOf({
        labels: { a: 'b' },
        run: { entrypoint: ['/bin/sh', '-c'], cmd: ['true'], env: ['PATH=/bin'], workingDir: '/' },
      }),
      {
        Env: ['PATH=/bin'],
        Entrypoint: ['/bin/sh', '-c'],
        Cmd: ['true'],
        WorkingDir: '/',
        Labels: { a: 'b' },
      },
    );
    assert.deepEqual(configOf({ labels: { a: 'b' }, run: {} }), { Labels: { a: 'b' } });
    assert.equal(
      buildImage({ labels: { a: 'b' }, run: {} }).manifest.descriptor.digest,
      buildImage({ labels: { a: 'b' } }).manifest.descriptor.digest,
    );
  });

  it('builds Docker schema 2 when asked', () => {
    const d = buildImage({ format: 'docker' });
    assert.equal(d.manifest.descriptor.mediaType, MediaType.DockerManifest);
    assert.equal(d.config.descriptor.mediaType, MediaType.DockerConfig);
  });
});

describe('selectPlatform', () => {
  const amd = buildImage({ platform: { os: 'linux', architecture: 'amd64' } });
  const armV8 = buildImage({ platform: { os: 'linux', architecture: 'arm64', variant: 'v8' } });
  const armV7 = buildImage({ platform: { os: 'linux', architecture: 'arm', variant: 'v7' } });
  const index = parseIndex(
    JSON.parse(Buffer.from(buildIndex([amd, armV8, armV7]).manifest.bytes).toString()),
    'i',
  );

  it('matches os and architecture, treating arm64 and arm64/v8 alike', () => {
    assert.equal(
      selectPlatform(index, { os: 'linux', architecture: 'amd64' }, 'i').digest,
      amd.manifest.descriptor.digest,
    );
    assert.equal(
      selectPlatform(index, { os: 'linux', architecture: 'arm64' }, 'i').digest,
      armV8.manifest.descriptor.digest,
    );
    assert.equal(
      selectPlatform(index, { os: 'linux', architecture: 'arm64', variant: 'v8' }, 'i').digest,
      armV8.manifest.descriptor.digest,
    );
    assert.equal(
      selectPlatform(index, { os: 'linux', architecture: 'arm', variant: 'v7' }, 'i').digest,
      armV7.manifest.descriptor.digest,
    );
  });

  it('raises MOLT_PLATFORM_NOT_FOUND for a variant or os the index lacks', () => {
    assert.throws(
      () => selectPlatform(index, { os: 'linux', architecture: 'arm', variant: 'v6' }, 'i'),
      (e: unknown) => isMoltError(e, ErrorCode.PlatformNotFound),
    );
    assert.throws(
      () => selectPlatform(index, { os: 'windows', architecture: 'amd64' }, 'i'),
      (e: unknown) => isMoltError(e, ErrorCode.PlatformNotFound),
    );
  });
});
