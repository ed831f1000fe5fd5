// SPDX-License-Identifier: Apache-2.0
/**
 * The kernel log a panicking boot left in pstore (docs/real-machines.md "Why a trial failed"): the
 * initramfs loads `efi_pstore`, so a panic on the way to the root — a release whose root fails
 * dm-verity, a root that cannot be mounted — is written to an EFI variable before `panic=10`
 * reboots; on the next boot systemd-pstore moves it to /var/lib/systemd/pstore (a tmpfs here, so
 * only this boot's records are there) and removes the variable. Read where it is, newest first;
 * the core decides what it says (core/upgrade/crash.ts). Bounded: a few files, their last bytes.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { tailOf } from '../../../platform/fs/tail.ts';

/** systemd-pstore's archive first, then the pstore file system (systemd-pstore not run yet). */
export const PstoreDirs = ['/var/lib/systemd/pstore', '/sys/fs/pstore'] as const;

const MaxFiles = 64;
const MaxDepth = 3;
/** A panic's lines are at the end of its record: the last 64 KiB hold them. */
const TailBytes = 64 * 1024;

async function dmesgFiles(dir: string, depth: number, into: string[]): Promise<void> {
  if (depth > MaxDepth || into.length >= MaxFiles) return;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (into.length >= MaxFiles) return;
    const path = join(dir, e.name);
    if (e.isDirectory()) await dmesgFiles(path, depth + 1, into);
    else if (e.isFile() && e.name.startsWith('dmesg')) into.push(path);
  }
}

/** The newest record that holds a kernel panic, or undefined (none, or no pstore here). */
export async function readPstoreCrash(
  dirs: readonly string[] = PstoreDirs,
): Promise<string | undefined> {
  const files: string[] = [];
  for (const dir of dirs) await dmesgFiles(dir, 0, files);
  const dated = await Promise.all(
    files.map(async (path) => ({
      path,
      at: (await stat(path).catch(() => undefined))?.mtimeMs ?? 0,
    })),
  );
  for (const { path } of dated.sort((a, b) => b.at - a.at)) {
    const text = await tailOf(path, TailBytes);
    if (text.includes('Kernel panic - not syncing')) return text;
  }
  return undefined;
}
