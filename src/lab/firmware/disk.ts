// SPDX-License-Identifier: Apache-2.0
/** The firmware's file access to a lab machine's ESP (`<root>/esp`). */
import { existsSync } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';

export type BootResult =
  | {
      readonly ok: true;
      readonly slot: 'A' | 'B';
      readonly entryId: string;
      readonly cmdline: string;
    }
  | { readonly ok: false; readonly reason: string };

export async function readOptional(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Whether an ESP-relative path (`/molt/a/vmlinuz`) names an existing file on the ESP. */
export function espExists(root: string): (path: string) => boolean {
  const esp = join(root, 'esp');
  return (path) => {
    const full = normalize(join(esp, path.replaceAll('\\', '/')));
    return full.startsWith(`${esp}/`) && existsSync(full);
  };
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** GRUB's `save_env`: overwrite the file's bytes in place (same inode, same length, no truncate). */
export async function writeInPlace(path: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.write(bytes, 0, bytes.length, 0);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** sd-boot's counter rename (`SetInfo` + `Flush`): rename, then make it durable. */
export async function renameFlushed(from: string, to: string): Promise<void> {
  await rename(from, to);
  await fsyncPath(dirname(to));
}

/** The `molt.slot=` the kernel command line names, if any. */
export function slotOfCmdline(cmdline: string): 'A' | 'B' | undefined {
  const match = /(?:^| )molt\.slot=([AB])(?: |$)/.exec(cmdline);
  return match?.[1] === 'A' || match?.[1] === 'B' ? match[1] : undefined;
}
