// SPDX-License-Identifier: Apache-2.0
/** The firmware's file access to a lab machine's ESP (`<root>/esp`). */
import { existsSync, readFileSync } from 'node:fs';
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

/** The file an ESP-relative path (`/molt/a/vmlinuz`) names, if it stays on the ESP. */
function espFile(root: string, path: string): string | undefined {
  const esp = join(root, 'esp');
  const full = normalize(join(esp, path.replaceAll('\\', '/')));
  return full.startsWith(`${esp}/`) ? full : undefined;
}

/** Whether an ESP-relative path names an existing file on the ESP. */
export function espExists(root: string): (path: string) => boolean {
  return (path) => {
    const full = espFile(root, path);
    return full !== undefined && existsSync(full);
  };
}

/** The text of an ESP-relative path, undefined when it is missing or not a file. */
export function espRead(root: string): (path: string) => string | undefined {
  return (path) => {
    const full = espFile(root, path);
    try {
      return full === undefined ? undefined : readFileSync(full, 'utf8');
    } catch {
      return undefined;
    }
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
export { writeInPlace } from '../../platform/fs/in-place-write.ts';

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
