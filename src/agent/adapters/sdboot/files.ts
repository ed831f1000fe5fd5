// SPDX-License-Identifier: Apache-2.0
/**
 * The systemd-boot back-end's files under `<root>/esp/loader/`: `loader.conf` and molt's entries
 * `entries/molt-<x>[+L[-D]].conf`, listed in sd-boot's own order (core/boot/sdboot-firmware.ts).
 * A state change is a durable rename; a content change an atomic replace of the same name.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  blsFileName,
  parseBlsFileName,
  renderLoaderConf,
  type BlsEntryName,
} from '../../../core/boot/bls.ts';
import { sdBootMenu } from '../../../core/boot/firmware.ts';
import { slotOfEntryId } from '../../../core/boot/slot-entry.ts';
import type { SlotId } from '../../../core/slots/slot.ts';
import { fsyncDir, renameDurable, writeFileAtomic } from '../fs/atomic-write.ts';

export interface MoltEntry {
  readonly slot: SlotId;
  readonly fileName: string;
  readonly name: BlsEntryName;
  readonly body: string;
  /** sd-boot `version` as a number (0 when absent or not a number). */
  readonly version: number;
}

export interface SdBootFiles {
  readonly loaderConf: string;
  readonly entriesDir: string;
}

export function sdBootFiles(root: string): SdBootFiles {
  const loader = join(root, 'esp', 'loader');
  return { loaderConf: join(loader, 'loader.conf'), entriesDir: join(loader, 'entries') };
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** molt's entries in sd-boot's menu order (a slot with several files lists its first one first). */
export async function listEntries(files: SdBootFiles): Promise<MoltEntry[]> {
  let names: string[];
  try {
    names = await readdir(files.entriesDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const read = await Promise.all(
    names.map(async (fileName) => {
      const name = parseBlsFileName(fileName);
      const slot = name === undefined ? undefined : slotOfEntryId(name.id);
      const body =
        slot === undefined ? undefined : await readOptional(join(files.entriesDir, fileName));
      return name === undefined || slot === undefined || body === undefined
        ? []
        : [{ fileName, body, slot, name }];
    }),
  );
  const found = read.flat();
  return sdBootMenu(found).map((listed) => {
    const entry = found.find((f) => f.fileName === listed.fileName);
    if (entry === undefined) throw new Error('unreachable: listed entry not found');
    return { ...entry, version: Number.parseInt(listed.entry.version ?? '', 10) || 0 };
  });
}

/** Rename a slot's entry to the state `name` (no-op when it already has that name). */
export async function renameEntry(
  files: SdBootFiles,
  entry: MoltEntry,
  name: BlsEntryName,
): Promise<string> {
  const to = blsFileName(name);
  if (to !== entry.fileName)
    await renameDurable(join(files.entriesDir, entry.fileName), join(files.entriesDir, to));
  return to;
}

/** Replace the content of `fileName` unless it is already `body`. */
export async function writeEntryFile(
  files: SdBootFiles,
  fileName: string,
  body: string,
): Promise<void> {
  if ((await readOptional(join(files.entriesDir, fileName))) !== body)
    await writeFileAtomic(join(files.entriesDir, fileName), body);
}

export async function deleteEntries(
  files: SdBootFiles,
  entries: readonly MoltEntry[],
): Promise<void> {
  for (const e of entries) await rm(join(files.entriesDir, e.fileName), { force: true });
  if (entries.length > 0) await fsyncDir(files.entriesDir);
}

/** `default molt-*` + `timeout 0`, so both slots match `default` (reference §2.3). */
export async function ensureLoaderConf(files: SdBootFiles): Promise<void> {
  const text = renderLoaderConf();
  if ((await readOptional(files.loaderConf)) !== text)
    await writeFileAtomic(files.loaderConf, text);
}
