// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's systemd-boot: lists `esp/loader/entries/*.conf` and reads `esp/loader/loader.conf`
 * as sd-boot 252 does (core/boot/firmware.ts `sdBoot`), and makes its own write — the boot
 * counter rename `+L-D` → `+(L-1)-(D+1)` — before "starting" the chosen entry.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sdBoot, type EntryFile } from '../../core/boot/firmware.ts';
import { espExists, readOptional, renameFlushed, slotOfCmdline, type BootResult } from './disk.ts';

async function entryFiles(dir: string): Promise<EntryFile[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const files = await Promise.all(
    names.map(async (fileName) => ({
      fileName,
      body: (await readOptional(join(dir, fileName)))?.toString('utf8'),
    })),
  );
  return files.flatMap((f) =>
    f.body === undefined ? [] : [{ fileName: f.fileName, body: f.body }],
  );
}

export async function bootSdBoot(root: string): Promise<BootResult> {
  const loader = join(root, 'esp', 'loader');
  const entriesDir = join(loader, 'entries');
  const conf = (await readOptional(join(loader, 'loader.conf')))?.toString('utf8') ?? '';
  const choice = sdBoot(await entryFiles(entriesDir), conf, espExists(root));
  if (choice.chosen === undefined)
    return { ok: false, reason: 'systemd-boot: no boot loader entry to boot' };
  if (choice.rename)
    await renameFlushed(join(entriesDir, choice.rename.from), join(entriesDir, choice.rename.to));
  const slot = slotOfCmdline(choice.cmdline);
  if (slot === undefined)
    return {
      ok: false,
      reason: `systemd-boot: entry ${choice.chosen} has no molt.slot= in its options`,
    };
  return { ok: true, slot, entryId: choice.chosen, cmdline: choice.cmdline };
}
