// SPDX-License-Identifier: Apache-2.0
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Write `data` to `path` so that readers see either the old file or the whole new one, even across
 * a crash or power cut: write a temporary file in the same directory, fsync it, rename it over
 * `path` (atomic on POSIX), then fsync the directory so the rename itself is durable. Writing in
 * place instead would leave a truncated file that the next run must discard (STYLE.md §14).
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  // pid + random: two molt processes saving the same cache never share a temporary file.
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fh = await open(tmp, 'wx', 0o644);
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  await syncDirectory(dir);
}

/** Best effort: some filesystems refuse fsync on a directory; the data itself is already synced. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // The rename is still atomic; only its durability across a power cut is weaker here.
  }
}
