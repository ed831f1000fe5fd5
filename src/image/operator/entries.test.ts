// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { tempDir } from '../../platform/process/managed-process.ts';
import { sha256Digest } from '../../oci/index.ts';
import {
  comparePaths,
  EntryMtime,
  gzipLayer,
  readTar,
  tarArchive,
  treeEntries,
  type LayerEntry,
} from './entries.ts';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const long = `usr/lib/molt/node_modules/${'a'.repeat(90)}/${'b'.repeat(90)}/${'c'.repeat(90)}/index.js`;
const sample: LayerEntry[] = [
  { kind: 'file', path: 'usr/local/bin/node', mode: 0o755, data: bytes('#!node') },
  { kind: 'dir', path: 'tmp/', mode: 0o1777 },
  { kind: 'dir', path: 'home/nonroot/', mode: 0o755, uid: 65532, gid: 65532 },
  { kind: 'symlink', path: 'lib64/ld.so', target: '/lib/x86_64-linux-gnu/ld.so' },
  { kind: 'hardlink', path: 'usr/bin/perl5', target: 'usr/local/bin/node' },
  { kind: 'file', path: long, mode: 0o644, data: bytes('module.exports = 1;\n') },
];

describe('operator image layer entries', () => {
  it('orders by path component: a directory right before what it holds', () => {
    const paths = ['usr/lib-x/', 'usr/lib/a', 'usr/', 'usr/lib/'].sort(comparePaths);
    assert.deepEqual(paths, ['usr/', 'usr/lib/', 'usr/lib/a', 'usr/lib-x/']);
  });

  it('makes the same layer bytes from the same entries in any order', () => {
    const a = gzipLayer(sample);
    const b = gzipLayer([...sample].reverse());
    assert.equal(sha256Digest(a.bytes), sha256Digest(b.bytes));
    const changed = gzipLayer([...sample.slice(1), { ...sample[0]!, mode: 0o700 } as LayerEntry]);
    assert.notEqual(sha256Digest(changed.bytes), sha256Digest(a.bytes));
  });

  it('keeps modes, owners, links and long paths through a tar round trip, at one fixed mtime', () => {
    const archive = tarArchive(sample);
    assert.deepEqual(archive, Buffer.from(gunzipSync(gzipLayer(sample).bytes)));
    const back = readTar(archive, 'layer');
    const byPath = new Map(back.map((e) => [e.path, e]));
    assert.deepEqual(byPath.get('tmp/'), {
      kind: 'dir',
      path: 'tmp/',
      mode: 0o1777,
      uid: 0,
      gid: 0,
    });
    assert.deepEqual(byPath.get('home/nonroot/'), {
      kind: 'dir',
      path: 'home/nonroot/',
      mode: 0o755,
      uid: 65532,
      gid: 65532,
    });
    assert.deepEqual(byPath.get('lib64/ld.so'), sample[3]);
    assert.deepEqual(byPath.get('usr/bin/perl5'), sample[4]);
    const node = byPath.get('usr/local/bin/node');
    assert.ok(node?.kind === 'file');
    assert.equal(Buffer.from(node.data).toString(), '#!node');
    const deep = byPath.get(long);
    assert.ok(deep?.kind === 'file', 'a path past ustar’s 255 characters survives (pax)');
    assert.deepEqual(
      back.map((e) => e.path),
      [...sample].map((e) => e.path).sort(comparePaths),
    );
    // The first header's mtime field (octal, bytes 136-147) holds the fixed time, not the clock's.
    const mtimeField = archive.subarray(136, 148).toString().replace(/\0.*$/, '').trim();
    assert.equal(Number.parseInt(mtimeField, 8), EntryMtime.getTime() / 1000);
  });

  it('reads a directory tree as root-owned entries with normalised modes', async () => {
    const dir = await tempDir('entries');
    try {
      await mkdir(join(dir.path, 'dist', 'bin'), { recursive: true });
      await writeFile(join(dir.path, 'dist', 'bin', 'molt.js'), 'x');
      await chmod(join(dir.path, 'dist', 'bin', 'molt.js'), 0o700);
      await writeFile(join(dir.path, 'package.json'), '{}');
      await chmod(join(dir.path, 'package.json'), 0o600);
      await symlink('../dist/bin/molt.js', join(dir.path, 'dist', 'link'));
      const entries = await treeEntries(dir.path, 'usr/lib/molt/');
      const byPath = new Map(entries.map((e) => [e.path, e]));
      assert.deepEqual(byPath.get('usr/lib/molt/'), {
        kind: 'dir',
        path: 'usr/lib/molt/',
        mode: 0o755,
      });
      assert.equal((byPath.get('usr/lib/molt/dist/bin/molt.js') as { mode: number }).mode, 0o755);
      assert.equal((byPath.get('usr/lib/molt/package.json') as { mode: number }).mode, 0o644);
      assert.deepEqual(byPath.get('usr/lib/molt/dist/link'), {
        kind: 'symlink',
        path: 'usr/lib/molt/dist/link',
        target: '../dist/bin/molt.js',
      });
      assert.equal(byPath.get('usr/lib/molt/dist/bin/')?.kind, 'dir');
    } finally {
      await dir.remove();
    }
  });

  it('refuses what is not a tar archive with a build error naming it', () => {
    assert.throws(
      () =>
        readTar(
          bytes('not a tar archive, just some text that is long enough'.repeat(20)),
          'base.tar',
        ),
      /base\.tar is not a readable tar archive/,
    );
  });
});
