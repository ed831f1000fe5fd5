// SPDX-License-Identifier: Apache-2.0
// Issue 14 defect 2: every declared size holds for tar layers too. A tar layer longer than its
// descriptor, a registry streaming zeros behind a small descriptor and a gzip bomb are refused
// quickly, with bounded bytes read and bounded memory; a pull can be cancelled midway. In every
// case no staging area is left and the live slots are untouched.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import {
  createOciImageSource,
  type OciImageSourceOptions,
} from '../../src/agent/adapters/oci-image-source/index.ts';
import { ErrorCode, isMoltError, MoltError } from '../../src/core/errors.ts';
import {
  createRegistryClient,
  MediaType,
  type LayerInput,
  type OciRegistryClient,
} from '../../src/oci/index.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { startFakeRegistry, type FakeRegistry } from '../../src/testkit/fake-registry.ts';
import {
  buildInstallerImage,
  pushInstallerImage,
  tarArchive,
} from '../../src/testkit/installer-image.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

const repo = 'acme/hostile';
const MiB = 1024 * 1024;
const files = [
  { name: 'vmlinuz', body: new Uint8Array(4096).fill(1) },
  { name: 'rootfs.img', body: new Uint8Array(8192).fill(2) },
];

/**
 * A small valid tar archive followed by `zeros` zero bytes (in 64 MiB steps), gzipped: a gzip
 * bomb. Built as concatenated gzip members (valid gzip, RFC 1952 §2.2), so a 2 GiB bomb takes
 * a fraction of a second to make.
 */
function gzipBomb(zeros: number): Uint8Array {
  const step = 64 * MiB;
  const member = gzipSync(Buffer.alloc(step), { level: 9 });
  const parts = [gzipSync(tarArchive(files))];
  for (let left = zeros; left > 0; left -= step) parts.push(member);
  return new Uint8Array(Buffer.concat(parts));
}

/**
 * Push `layer` as the image's only layer, its descriptor's size replaced by `declared`. The image
 * is built around a small stand-in layer (building hashes a gzip layer's inflated bytes for the
 * config's diff_ids, minutes for a bomb; molt never reads diff_ids), then the descriptor is swapped.
 */
async function pushLying(
  client: OciRegistryClient,
  tag: string,
  layer: LayerInput,
  declared: number,
): Promise<void> {
  const { built } = buildInstallerImage({
    artifacts: {},
    extraLayers: [{ mediaType: layer.mediaType, bytes: gzipSync(tarArchive(files)) }],
  });
  await client.pushBlob(repo, built.config.bytes, built.config.descriptor.mediaType);
  const pushed = await client.pushBlob(repo, layer.bytes, layer.mediaType);
  const manifest = JSON.parse(new TextDecoder().decode(built.manifest.bytes)) as {
    layers: { digest: string; size: number }[];
  };
  for (const l of manifest.layers) Object.assign(l, { digest: pushed.digest, size: declared });
  await client.pushManifest(
    repo,
    tag,
    new TextEncoder().encode(JSON.stringify(manifest)),
    built.manifest.descriptor.mediaType,
  );
}

describe('image pull from a hostile registry', () => {
  let registry: RunningRegistry;
  let client: OciRegistryClient;
  let fake: FakeRegistry;
  let fakeClient: OciRegistryClient;
  let root: { path: string; remove: () => Promise<void> };

  before(async () => {
    [registry, fake, root] = await Promise.all([
      startRegistry(),
      startFakeRegistry(),
      tempDir('machine'),
    ]);
    client = createRegistryClient({ registry: registry.host, insecure: true });
    fakeClient = createRegistryClient({ registry: fake.host, insecure: true, retries: 0 });
  });
  after(async () => {
    await Promise.all([client.close(), fakeClient.close()]);
    await Promise.all([registry.stop(), fake.close(), root.remove()]);
  });

  const noStaging = async (): Promise<void> => {
    for (const dir of ['esp/molt', 'slots'])
      assert.deepEqual(
        (await readdir(join(root.path, dir)).catch(() => [])).filter((n) => n.endsWith('.next')),
        [],
        `no staging left in ${dir}`,
      );
  };

  async function refused(
    image: string,
    code: string,
    options: Partial<OciImageSourceOptions> & { signal?: AbortSignal } = {},
  ): Promise<number> {
    const { signal, ...rest } = options;
    const source = createOciImageSource({
      root: root.path,
      registry: { insecure: true, retries: 0 },
      ...rest,
    });
    const started = performance.now();
    await assert.rejects(
      signal === undefined ? source.pull(image, 'B') : source.pull(image, 'B', { signal }),
      (e: unknown) => {
        assert.ok(isMoltError(e), `expected a MoltError, got ${String(e)}`);
        assert.equal(e.code, code, e.message);
        return true;
      },
    );
    await noStaging();
    return performance.now() - started;
  }

  it('refuses a tar layer longer than its descriptor, gzipped or not', async () => {
    const tar = tarArchive([...files, { name: 'initrd.img', body: new Uint8Array(200_000) }]);
    await pushLying(client, 'long-tar', { mediaType: MediaType.OciLayer, bytes: tar }, 10);
    await refused(`${registry.host}/${repo}:long-tar`, ErrorCode.ImageTooLarge);
    const gz = gzipBomb(0);
    await pushLying(client, 'long-gz', { mediaType: MediaType.OciLayerGzip, bytes: gz }, 10);
    await refused(`${registry.host}/${repo}:long-gz`, ErrorCode.ImageTooLarge);
  });

  it('stops reading an endless stream behind a 4,096-byte descriptor at once', async () => {
    const pushed = await pushInstallerImage(fakeClient, repo, 'endless', {
      artifacts: { vmlinuz: 100, 'rootfs.img': 1000 },
      format: 'tar',
    });
    const layer = pushed.built.layers[0]?.descriptor;
    assert.ok(layer !== undefined && layer.size <= 4096);
    const sent = { bytes: 0 };
    fake.inject({
      method: 'GET',
      path: new RegExp(`/blobs/${layer.digest}$`),
      fault: { kind: 'endless', sent },
    });
    try {
      const ms = await refused(`${fake.host}/${repo}:endless`, ErrorCode.ImageTooLarge);
      assert.ok(ms < 5000, `refused after ${Math.round(ms)} ms`);
      // What the server wrote before the client hung up: socket buffers, not a stream's worth.
      assert.ok(sent.bytes < 16 * MiB, `the registry sent ${sent.bytes} bytes`);
    } finally {
      fake.clearFaults();
    }
  });

  it('refuses a gzip bomb (zeros after a valid archive) quickly and with bounded memory', async () => {
    const bomb = gzipBomb(2048 * MiB);
    await pushLying(
      client,
      'bomb',
      { mediaType: MediaType.OciLayerGzip, bytes: bomb },
      bomb.length,
    );
    const rssBefore = process.memoryUsage().rss;
    // The default image cap (2 GiB): the bomb is refused long before it, at the trailing data.
    const ms = await refused(`${registry.host}/${repo}:bomb`, ErrorCode.ImageInvalid);
    // maxRSS is the peak of the process: a bomb inflated in memory shows here.
    const peak = process.resourceUsage().maxRSS * 1024;
    assert.ok(ms < 5000, `refused after ${Math.round(ms)} ms`);
    assert.ok(peak - rssBefore < 200 * MiB, `peak RSS grew by ${(peak - rssBefore) / MiB} MiB`);
  });

  it('a pull aborted by its signal stops at once and leaves no staging', async () => {
    const pushed = await pushInstallerImage(fakeClient, repo, 'cancel', {
      artifacts: { vmlinuz: 100, 'rootfs.img': 2000 },
      format: 'tar+gzip',
    });
    const layer = pushed.built.layers[0]?.descriptor;
    assert.ok(layer !== undefined);
    // A registry that stalls mid-body: without the signal, only the 30 s body timeout would end it.
    fake.inject({
      method: 'GET',
      path: new RegExp(`/blobs/${layer.digest}$`),
      fault: { kind: 'stall', afterBytes: 10 },
    });
    try {
      const reason = new MoltError(ErrorCode.Cancelled, 'cancelled by the test');
      const controller = new AbortController();
      setTimeout(() => {
        controller.abort(reason);
      }, 300);
      const ms = await refused(`${fake.host}/${repo}:cancel`, ErrorCode.Cancelled, {
        signal: controller.signal,
      });
      assert.ok(ms < 3000, `cancelled after ${Math.round(ms)} ms`);
    } finally {
      fake.clearFaults();
    }
  });
});
