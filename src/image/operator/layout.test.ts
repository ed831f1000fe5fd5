// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { buildImage, MediaType, sha256Digest } from '../../oci/index.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { gzipLayer } from './entries.ts';
import { writeLayout } from './layout.ts';

const image = (body: string) =>
  buildImage({
    layers: [
      gzipLayer([{ kind: 'file', path: 'a', mode: 0o644, data: new TextEncoder().encode(body) }]),
    ],
    run: { entrypoint: ['/a'] },
  });

interface Index {
  mediaType: string;
  manifests: {
    digest: string;
    size: number;
    mediaType: string;
    annotations: Record<string, string>;
  }[];
}

describe('the OCI image layout of --out', () => {
  it('holds oci-layout, index.json naming the image by tag, and every blob by digest', async () => {
    const dir = await tempDir('layout');
    try {
      const built = image('one');
      await writeLayout(join(dir.path, 'out'), built, '0.1.0');
      const out = join(dir.path, 'out');
      assert.deepEqual(JSON.parse(await readFile(join(out, 'oci-layout'), 'utf8')), {
        imageLayoutVersion: '1.0.0',
      });
      const index = JSON.parse(await readFile(join(out, 'index.json'), 'utf8')) as Index;
      assert.equal(index.mediaType, MediaType.OciIndex);
      const [entry] = index.manifests;
      assert.ok(entry);
      assert.equal(entry.digest, built.manifest.descriptor.digest);
      assert.equal(entry.mediaType, MediaType.OciManifest);
      assert.equal(entry.annotations['org.opencontainers.image.ref.name'], '0.1.0');
      const blobs = await readdir(join(out, 'blobs', 'sha256'));
      assert.equal(blobs.length, 3);
      for (const name of blobs) {
        const bytes = await readFile(join(out, 'blobs', 'sha256', name));
        assert.equal(sha256Digest(bytes), `sha256:${name}`);
      }
      // A second build replaces the layout whole: no blob of the first is left behind.
      await writeLayout(out, image('two'), '0.1.1');
      const again = JSON.parse(await readFile(join(out, 'index.json'), 'utf8')) as Index;
      assert.equal(again.manifests[0]?.annotations['org.opencontainers.image.ref.name'], '0.1.1');
      assert.ok(
        !(await readdir(join(out, 'blobs', 'sha256'))).includes(
          built.layers[0]!.descriptor.digest.slice(7),
        ),
      );
      assert.deepEqual((await readdir(dir.path)).sort(), ['out']);
    } finally {
      await dir.remove();
    }
  });

  it('never replaces a directory that holds something else, or a file', async () => {
    const dir = await tempDir('layout');
    try {
      const busy = join(dir.path, 'busy');
      await mkdir(busy);
      await writeFile(join(busy, 'notes.txt'), 'mine');
      await writeFile(join(dir.path, 'file'), 'mine');
      for (const target of [busy, join(dir.path, 'file')])
        await assert.rejects(
          writeLayout(target, image('x'), 't'),
          (e: unknown) =>
            isMoltError(e) &&
            e.code === ErrorCode.BadFlag &&
            /holds no OCI image layout/.test(e.message),
        );
      assert.equal(await readFile(join(busy, 'notes.txt'), 'utf8'), 'mine');
    } finally {
      await dir.remove();
    }
  });
});
