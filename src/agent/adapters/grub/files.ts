// SPDX-License-Identifier: Apache-2.0
/**
 * Reading and writing the GRUB back-end's two files under `<root>/esp/grub/`. Writes compare
 * first (an unchanged file is never rewritten) and replace atomically: molt never edits grubenv
 * in place (only GRUB does, at boot, with `save_env`).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseGrubCfg, renderGrubCfg, type GrubMenuEntry } from '../../../core/boot/grub-cfg.ts';
import {
  createGrubenv,
  encodeGrubenv,
  parseGrubenv,
  type Grubenv,
} from '../../../core/boot/grubenv.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';

export interface GrubFiles {
  readonly cfgPath: string;
  readonly envPath: string;
}

export function grubFiles(root: string): GrubFiles {
  return {
    cfgPath: join(root, 'esp', 'grub', 'grub.cfg'),
    envPath: join(root, 'esp', 'grub', 'grubenv'),
  };
}

async function readOptional(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The menu entries of grub.cfg; none when the file does not exist yet. */
export async function readEntries(files: GrubFiles): Promise<readonly GrubMenuEntry[]> {
  const text = await readOptional(files.cfgPath);
  return text === undefined ? [] : parseGrubCfg(text.toString('utf8')).entries;
}

/** The grubenv block; a fresh one (as `grub-editenv create`) when the file does not exist yet. */
export async function readEnv(files: GrubFiles): Promise<Grubenv> {
  const bytes = await readOptional(files.envPath);
  return bytes === undefined ? createGrubenv() : parseGrubenv(new Uint8Array(bytes));
}

/** Rewrite grub.cfg for `entries` (ordered by id) unless it already says exactly that. */
export async function writeEntries(
  files: GrubFiles,
  entries: readonly GrubMenuEntry[],
): Promise<void> {
  const sorted = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const text = renderGrubCfg(sorted);
  const current = await readOptional(files.cfgPath);
  if (current?.toString('utf8') !== text) await writeFileAtomic(files.cfgPath, text);
}

/** Replace grubenv with `env` unless the file already holds these bytes. */
export async function writeEnv(files: GrubFiles, env: Grubenv): Promise<void> {
  const bytes = encodeGrubenv(env);
  const current = await readOptional(files.envPath);
  if (current === undefined || !current.equals(bytes)) await writeFileAtomic(files.envPath, bytes);
}
