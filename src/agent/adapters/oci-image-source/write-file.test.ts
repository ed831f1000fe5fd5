// SPDX-License-Identifier: Apache-2.0
// Streaming a blob into a file on a filesystem that fills up (a real tmpfs, as root): the write
// goes on after a short write and ends in MOLT_NO_SPACE, a user's problem, not a bug in molt.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { writeBlobToFile, type BlobPump } from './write-file.ts';

const run = promisify(execFile);
const needsRoot = process.getuid?.() === 0 ? false : 'needs root (mounts a tmpfs)';
const KiB = 1024;

const pumpOf =
  (bytes: Buffer): BlobPump =>
  async (sink) => {
    for (let at = 0; at < bytes.byteLength; at += 64 * KiB)
      await sink.write(bytes.subarray(at, at + 64 * KiB));
    return bytes.byteLength;
  };

describe('a blob written to a filesystem that fills up', { skip: needsRoot }, () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    dir = await tempDir('full-fs');
    await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir.path]);
  });
  after(async () => {
    await run('umount', [dir.path]);
    await dir.remove();
  });

  it('writes a blob that fits whole, in batches of several MiB asked as one write', async () => {
    const bytes = randomBytes(600 * KiB);
    const path = join(dir.path, 'fits');
    const n = await writeBlobToFile(pumpOf(bytes), path, { limit: 1e9, onBytes: () => undefined });
    assert.equal(n, bytes.byteLength);
    assert.ok((await readFile(path)).equals(bytes));
  });

  it('fails with MOLT_NO_SPACE, naming what to do, when the filesystem is full', async () => {
    const path = join(dir.path, 'too-big');
    await assert.rejects(
      writeBlobToFile(pumpOf(randomBytes(2048 * KiB)), path, {
        limit: 1e9,
        onBytes: () => undefined,
      }),
      (e: unknown) =>
        isMoltError(e, ErrorCode.NoSpace) &&
        /--state-size/.test(e.hint ?? '') &&
        e.cause !== undefined,
    );
  });
});
