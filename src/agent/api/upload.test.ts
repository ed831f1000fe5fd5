// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../core/errors.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { receiveFile } from './upload.ts';

describe('bounded uploads', () => {
  let dir: { path: string; remove(): Promise<void> };
  before(async () => {
    dir = await tempDir('upload');
  });
  after(async () => {
    await dir.remove();
  });
  const chunks = (n: number, size: number): Readable =>
    Readable.from(Array.from({ length: n }, () => Buffer.alloc(size, 1)));

  it('writes the body to a private file the caller removes', async () => {
    const f = await receiveFile({
      body: chunks(3, 1000),
      contentLength: undefined,
      dir: dir.path,
      maxBytes: 3000,
    });
    assert.equal(f.bytes, 3000);
    assert.equal((await readFile(f.path)).length, 3000);
    await f.remove();
    assert.deepEqual(await readdir(dir.path), []);
  });

  it('stops a body without Content-Length once it passes the limit, and leaves no file', async () => {
    await assert.rejects(
      receiveFile({
        body: chunks(5, 1000),
        contentLength: undefined,
        dir: dir.path,
        maxBytes: 3000,
      }),
      { code: ErrorCode.EtcdSnapshotTooLarge },
    );
    assert.deepEqual(await readdir(dir.path), []);
  });

  it('refuses a declared length over the limit before writing anything', async () => {
    await assert.rejects(
      receiveFile({ body: chunks(1, 10), contentLength: '3001', dir: dir.path, maxBytes: 3000 }),
      { code: ErrorCode.EtcdSnapshotTooLarge },
    );
    assert.deepEqual(await readdir(dir.path), []);
  });
});
