// SPDX-License-Identifier: Apache-2.0
/**
 * The GRUB back-end's files on the ESP (core/boot/grub-cfg.ts): `grub/grub.cfg`, written once;
 * `grub/grubenv`, rewritten in place; `molt/<x>/grub.cfg`, a slot's entry file. Writes compare
 * first: an unchanged file is never rewritten.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  checkGrubCfg,
  GrubCfg,
  grubEntryPath,
  parseGrubEntry,
  type GrubMenuEntry,
} from '../../../core/boot/grub-cfg.ts';
import {
  createGrubenv,
  encodeGrubenv,
  parseGrubenv,
  type Grubenv,
} from '../../../core/boot/grubenv.ts';
import { slotEntryId } from '../../../core/boot/slot-entry.ts';
import type { SlotId } from '../../../core/slots/slot.ts';
import { writeInPlace } from '../../../platform/fs/in-place-write.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';

export interface GrubFiles {
  readonly esp: string;
  readonly cfgPath: string;
  readonly envPath: string;
}

export function grubFiles(root: string): GrubFiles {
  const esp = join(root, 'esp');
  return {
    esp,
    cfgPath: join(esp, 'grub', 'grub.cfg'),
    envPath: join(esp, 'grub', 'grubenv'),
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

/** Check grub.cfg is molt's; false when it does not exist yet. */
export async function checkCfg(files: GrubFiles): Promise<boolean> {
  const text = await readOptional(files.cfgPath);
  if (text !== undefined) checkGrubCfg(text.toString('utf8'));
  return text !== undefined;
}

/**
 * Write grub.cfg if it does not exist yet (the first install, before anything can boot from it);
 * never rewrite it.
 */
export async function ensureCfg(files: GrubFiles): Promise<void> {
  if (!(await checkCfg(files))) await writeFileAtomic(files.cfgPath, GrubCfg);
}

/** The grubenv block; a fresh one (as `grub-editenv create`) when the file does not exist yet. */
export async function readEnv(files: GrubFiles): Promise<Grubenv> {
  const bytes = await readOptional(files.envPath);
  return bytes === undefined ? createGrubenv() : parseGrubenv(new Uint8Array(bytes));
}

/**
 * Write `env` unless grubenv already holds these bytes: in place, as GRUB's `save_env` does (the
 * only crash-safe change of a file on FAT); created by rename only when missing or of another size.
 */
export async function writeEnv(files: GrubFiles, env: Grubenv): Promise<void> {
  const bytes = encodeGrubenv(env);
  const current = await readOptional(files.envPath);
  if (current?.equals(bytes) === true) return;
  if (current?.length === bytes.length) await writeInPlace(files.envPath, bytes);
  else await writeFileAtomic(files.envPath, bytes);
}

const entryFile = (files: GrubFiles, slot: SlotId): string => join(files.esp, grubEntryPath(slot));

/** A slot's entry file as text; undefined when it does not exist. */
export async function readEntryText(files: GrubFiles, slot: SlotId): Promise<string | undefined> {
  return (await readOptional(entryFile(files, slot)))?.toString('utf8');
}

/** A slot's entry; undefined when its file does not exist. */
export async function readEntry(
  files: GrubFiles,
  slot: SlotId,
): Promise<GrubMenuEntry | undefined> {
  const text = await readEntryText(files, slot);
  return text === undefined ? undefined : parseGrubEntry(slotEntryId(slot), text);
}

/** Replace a slot's entry file (the caller made sure grubenv does not let that slot boot). */
export async function writeEntryText(files: GrubFiles, slot: SlotId, text: string): Promise<void> {
  await writeFileAtomic(entryFile(files, slot), text);
}
