// SPDX-License-Identifier: Apache-2.0
// Issue 3 "Bad input" for the image pull: every broken reference or installer image fails with a
// stable code, before or while writing into staging, and the machine's live slots stay as they were.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFsSlotStore } from '../../src/agent/adapters/fs-slot-store/index.ts';
import {
  createOciImageSource,
  type OciImageSourceOptions,
} from '../../src/agent/adapters/oci-image-source/index.ts';
import { ErrorCode, isMoltError } from '../../src/core/errors.ts';
import { createRegistryClient, MediaType, type OciRegistryClient } from '../../src/oci/index.ts';
import { startFakeRegistry, type FakeRegistry } from '../../src/testkit/fake-registry.ts';
import {
  artifactLayer,
  pushInstallerImage,
  tarLayer,
  type InstallerImageSpec,
} from '../../src/testkit/installer-image.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

const repo = 'acme/installer';
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const kernel = text('kernel');
const rootfs = text('rootfs');

/** sha256 of every file under the live slot directories, by path. */
async function liveTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const dir of ['esp/molt/a', 'esp/molt/b', 'slots/a', 'slots/b']) {
    for (const e of await readdir(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const path = join(e.parentPath, e.name);
      out[relative(root, path)] = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
    }
  }
  return out;
}

const noStaging = async (root: string): Promise<void> => {
  for (const dir of ['esp/molt', 'slots'])
    assert.deepEqual(
      (await readdir(join(root, dir))).filter((n) => n.endsWith('.next')),
      [],
      `no staging left in ${dir}`,
    );
};

describe('image pull bad input', () => {
  let registry: RunningRegistry;
  let client: OciRegistryClient;
  let fake: FakeRegistry;
  let fakeClient: OciRegistryClient;
  let root: { path: string; remove: () => Promise<void> };
  let live: Record<string, string>;
  let n = 0;

  before(async () => {
    [registry, fake, root] = await Promise.all([
      startRegistry(),
      startFakeRegistry(),
      tempDir('machine'),
    ]);
    client = createRegistryClient({ registry: registry.host, insecure: true });
    fakeClient = createRegistryClient({ registry: fake.host, insecure: true, retries: 0 });
    // A machine with both slots written.
    await pushInstallerImage(client, repo, 'good');
    const store = createFsSlotStore(root.path);
    const source = createOciImageSource({ root: root.path, registry: { insecure: true } });
    for (const slot of ['A', 'B'] as const) {
      await source.pull(`${registry.host}/${repo}:good`, slot);
      await store.install(slot, `op-${slot}`);
      await store.markReady(slot, `op-${slot}`);
    }
    live = await liveTree(root.path);
  });
  after(async () => {
    await Promise.all([client.close(), fakeClient.close()]);
    await Promise.all([registry.stop(), fake.close(), root.remove()]);
  });

  async function expectRefused(
    image: string,
    code: string,
    options: Partial<OciImageSourceOptions> = {},
  ): Promise<void> {
    const source = createOciImageSource({
      root: root.path,
      registry: { insecure: true, retries: 0 },
      ...options,
    });
    await assert.rejects(source.pull(image, 'B'), (e: unknown) => {
      assert.ok(isMoltError(e), `expected a MoltError, got ${String(e)}`);
      assert.equal(e.code, code, e.message);
      return true;
    });
    assert.deepEqual(await liveTree(root.path), live, 'live slots untouched');
    await noStaging(root.path);
    await createFsSlotStore(root.path).verify('B');
  }

  /** Push `spec` to the real registry and expect the pull to fail with `code`. */
  async function refusedImage(
    spec: InstallerImageSpec,
    code: string,
    options: Partial<OciImageSourceOptions> = {},
  ): Promise<void> {
    const tag = `bad-${++n}`;
    await pushInstallerImage(client, repo, tag, spec);
    await expectRefused(`${registry.host}/${repo}:${tag}`, code, options);
  }

  it('refuses invalid references before any request', async () => {
    for (const ref of [
      '',
      'not a reference',
      'acme/installer:1.0',
      `${registry.host}/Acme/installer:1`,
      `${registry.host}/acme/installer:bad+tag`,
      `${registry.host}/acme/installer@sha256:abc`,
      `${registry.host}/acme//installer:1`,
      'http://example.com/acme/installer:1',
    ])
      await expectRefused(ref, ErrorCode.InvalidReference);
  });

  it('reports a missing image and a missing layer blob as not found', async () => {
    await expectRefused(`${registry.host}/${repo}:no-such-tag`, ErrorCode.RegistryNotFound);
    const pushed = await pushInstallerImage(client, repo, 'blob-gone', {
      artifacts: { vmlinuz: 100, 'rootfs.img': 70_000 },
    });
    const layer = pushed.built.layers[1]?.descriptor.digest ?? '';
    const res = await fetch(`${registry.url}/v2/${repo}/blobs/${layer}`, { method: 'DELETE' });
    assert.equal(res.status, 202);
    await expectRefused(`${registry.host}/${repo}:blob-gone`, ErrorCode.RegistryNotFound);
  });

  it('refuses a layer whose bytes do not match its digest, and one longer than its descriptor', async () => {
    const pushed = await pushInstallerImage(fakeClient, repo, 'corrupt', {
      artifacts: { vmlinuz: 100, 'rootfs.img': 70_000 },
    });
    const layer = pushed.built.layers[1]?.descriptor.digest ?? '';
    fake.inject({
      method: 'GET',
      path: new RegExp(`/blobs/${layer}$`),
      fault: { kind: 'corrupt-body' },
    });
    await expectRefused(`${fake.host}/${repo}:corrupt`, ErrorCode.DigestMismatch);
    fake.clearFaults();
    fake.inject({
      method: 'GET',
      path: new RegExp(`/blobs/${layer}$`),
      fault: { kind: 'oversize', bytes: 200_000, declareLength: false },
    });
    await expectRefused(`${fake.host}/${repo}:corrupt`, ErrorCode.ImageTooLarge);
    fake.clearFaults();
  });

  it('refuses images without a kernel or a rootfs, raw or tar', async () => {
    await refusedImage({ artifacts: { 'rootfs.img': rootfs } }, ErrorCode.ImageInvalid);
    await refusedImage(
      { artifacts: { vmlinuz: kernel, 'initrd.img': kernel } },
      ErrorCode.ImageInvalid,
    );
    await refusedImage({ artifacts: { vmlinuz: kernel }, format: 'tar' }, ErrorCode.ImageInvalid);
    await refusedImage(
      { artifacts: { 'rootfs.img': rootfs }, format: 'tar+gzip' },
      ErrorCode.ImageInvalid,
    );
    await refusedImage({ artifacts: {} }, ErrorCode.ImageInvalid);
  });

  it('refuses unknown and duplicate artifact names, foreign layer types and bad labels', async () => {
    const cases: InstallerImageSpec[] = [
      { artifacts: { vmlinuz: kernel, 'rootfs.img': rootfs, 'evil.sh': kernel } },
      { artifacts: { vmlinuz: kernel, 'rootfs.img': rootfs, 'evil.sh': kernel }, format: 'tar' },
      {
        artifacts: { vmlinuz: kernel, 'rootfs.img': rootfs },
        extraLayers: [artifactLayer('vmlinuz', text('second kernel'))],
      },
      {
        artifacts: { vmlinuz: kernel, 'rootfs.img': rootfs },
        extraLayers: [tarLayer([{ name: 'rootfs.img', body: rootfs }])],
      },
      {
        artifacts: {},
        extraLayers: [
          tarLayer([
            { name: 'vmlinuz', body: kernel },
            { name: 'rootfs.img', body: rootfs },
            { name: 'vmlinuz', body: kernel },
          ]),
        ],
      },
      {
        artifacts: { vmlinuz: kernel, 'rootfs.img': rootfs },
        extraLayers: [{ mediaType: 'application/octet-stream', bytes: kernel }],
      },
      {
        artifacts: { vmlinuz: kernel, 'rootfs.img': rootfs },
        extraLayers: [{ mediaType: 'application/vnd.dev.molt.artifact.v1', bytes: kernel }],
      },
      { noVersion: true },
      { version: 'banana' },
      { labels: { 'dev.molt.lab.boot': 'maybe' } },
      { labels: { 'dev.molt.lab.health': 'sometimes' } },
      { labels: { 'dev.molt.lab.bot': 'fail' } },
    ];
    for (const spec of cases) await refusedImage(spec, ErrorCode.ImageInvalid);
  });

  it('refuses tar entries that would escape the slot or are not regular files', async () => {
    const entries = [
      { name: '../vmlinuz', body: kernel },
      { name: '/vmlinuz', body: kernel },
      { name: 'boot/vmlinuz', body: kernel },
      { name: './../../etc/rootfs.img', body: kernel },
      { name: 'vmlinuz', type: '2', linkname: '/etc/passwd' },
      { name: 'vmlinuz', type: '1', linkname: 'rootfs.img' },
      { name: 'vmlinuz', type: '3' },
      { name: 'vmlinuz', type: '4' },
      { name: 'vmlinuz', type: '6' },
      { name: 'boot/', type: '5' },
    ] as const;
    for (const entry of entries)
      for (const gzip of [false, true])
        await refusedImage(
          {
            artifacts: {},
            extraLayers: [tarLayer([{ name: 'rootfs.img', body: rootfs }, entry], gzip)],
          },
          ErrorCode.LayerUnsafePath,
        );
  });

  it('refuses oversized images from their descriptors, and tar layers that unpack past the cap', async () => {
    await refusedImage(
      { artifacts: { vmlinuz: 1000, 'rootfs.img': 200_000 } },
      ErrorCode.ImageTooLarge,
      { maxBytes: 100_000 },
    );
    const zeros = new Uint8Array(1_000_000);
    await refusedImage(
      { artifacts: { vmlinuz: kernel, 'rootfs.img': zeros }, format: 'tar+gzip' },
      ErrorCode.ImageTooLarge,
      { maxBytes: 100_000 },
    );
  });

  it('refuses a tar layer that is not a tar archive', async () => {
    for (const bytes of [text('this is not a tar archive at all'), new Uint8Array(2048).fill(7)])
      await refusedImage(
        {
          artifacts: { vmlinuz: kernel, 'rootfs.img': rootfs },
          extraLayers: [{ mediaType: MediaType.OciLayer, bytes }],
        },
        ErrorCode.ImageInvalid,
      );
  });
});
