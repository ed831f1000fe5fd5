// SPDX-License-Identifier: Apache-2.0
// Writing an artifact into a region of a file as into a slot partition: direct (aligned batches,
// a padded or buffered tail) or buffered (an unaligned region), and nothing outside the region.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import type { ArtifactTarget } from '../../ports/slot-store.ts';
import { alignedBatches } from './direct-write.ts';
import type { BlobPump } from './write-file.ts';
import { writeBlobToTarget } from './write-target.ts';

/** Deliver `bytes` in uneven chunks, waiting when the sink asks to. */
const pumpOf =
  (bytes: Buffer): BlobPump =>
  async (sink) => {
    for (let at = 0, n = 1; at < bytes.byteLength; n = (n * 7919) % 300_000) {
      const chunk = bytes.subarray(at, at + n + 1);
      at += chunk.byteLength;
      await sink.write(chunk);
    }
    return bytes.byteLength;
  };

const MiB = 1024 * 1024;

async function roundTrip(
  size: number,
  target: Omit<ArtifactTarget, 'path'>,
  sparse = false,
): Promise<void> {
  const dir = await tempDir('write-target');
  try {
    const path = join(dir.path, 'disk');
    const length = target.offset + target.capacity + 8192;
    // A sparse image is all holes: a direct read of one is never checked for alignment.
    const before = sparse ? Buffer.alloc(length) : randomBytes(length);
    if (sparse) {
      await writeFile(path, '');
      await truncate(path, length);
    } else await writeFile(path, before);
    const bytes = randomBytes(size);
    let reported = 0;
    const written = await writeBlobToTarget(
      pumpOf(bytes),
      { path, ...target },
      {
        limit: size,
        onBytes: (n) => (reported += n),
      },
    );
    assert.equal(written, size);
    assert.equal(reported, size);
    const after = await readFile(path);
    const end = target.offset + size;
    assert.equal(after.byteLength, before.byteLength, 'not truncated, not grown');
    assert.ok(after.subarray(target.offset, end).equals(bytes), 'the artifact is in the region');
    assert.ok(after.subarray(0, target.offset).equals(before.subarray(0, target.offset)));
    const regionEnd = target.offset + target.capacity;
    assert.ok(after.subarray(regionEnd).equals(before.subarray(regionEnd)), 'after the region');
  } finally {
    await dir.remove();
  }
}

describe('writeBlobToTarget', () => {
  it('writes with O_DIRECT where the file system takes it, a padded tail included', async (t) => {
    const dir = await tempDir('write-target');
    const path = join(dir.path, 'probe');
    await writeFile(path, Buffer.alloc(8192));
    const direct = alignedBatches({ path, offset: 4096, capacity: 4096 });
    await dir.remove();
    if (direct === undefined) {
      t.skip('this file system refuses O_DIRECT');
      return;
    }
    await roundTrip(9 * MiB + 12_345, { offset: 1 * MiB, capacity: 10 * MiB });
    await roundTrip(8 * MiB, { offset: 1 * MiB, capacity: 8 * MiB });
    await roundTrip(MiB + 123, { offset: 1 * MiB, capacity: 2 * MiB }, true);
  });

  it('writes the tail without O_DIRECT when the padding would not fit', () =>
    roundTrip(4 * MiB + 100, { offset: 4096, capacity: 4 * MiB + 100 }));

  it('writes through the page cache at an unaligned offset', () =>
    roundTrip(5 * MiB + 3, { offset: 1000, capacity: 6 * MiB }));

  it('refuses more bytes than the region holds', async () => {
    await assert.rejects(roundTrip(2 * MiB, { offset: 0, capacity: MiB }), (e: unknown) =>
      isMoltError(e, ErrorCode.ImageTooLarge),
    );
  });
});
