// SPDX-License-Identifier: Apache-2.0
/**
 * Crash-safe file replacement (docs/adr/0004 §4): write a temp file in the same directory, fsync
 * it, rename it over the target, fsync the directory. A power cut leaves either the old or the
 * new file, never a torn one — except where the format forbids renames (GRUB's in-place grubenv
 * edits, done by the firmware, not by molt).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** fsync a directory so a rename or create inside it survives a power cut. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Atomically replace `path` with `data` (parents created). */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { readonly mode?: number } = {},
): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', options.mode ?? 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temp, path);
  await fsyncDir(dir);
}

/** Atomically rename `from` to `to` and make it durable (both directories fsynced). */
export async function renameDurable(from: string, to: string): Promise<void> {
  await rename(from, to);
  await fsyncDir(dirname(to));
  if (dirname(from) !== dirname(to)) await fsyncDir(dirname(from));
}
