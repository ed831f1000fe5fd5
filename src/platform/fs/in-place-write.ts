// SPDX-License-Identifier: Apache-2.0
/**
 * Overwriting a file's bytes in place, as GRUB's `save_env` does: same inode, same length, no
 * truncate. On FAT (the ESP) this is the only crash-safe way to change a file: no cluster is
 * allocated or freed and no directory entry moves, so a power cut leaves the old or the new bytes
 * of a sector, never a broken file system (docs/adr/0008).
 */
import { open } from 'node:fs/promises';

/** Overwrite `path` (which exists and is `bytes.length` long) with `bytes`, then fsync it. */
export async function writeInPlace(path: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.write(bytes, 0, bytes.length, 0);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
