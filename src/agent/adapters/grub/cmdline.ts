// SPDX-License-Identifier: Apache-2.0
/**
 * The slot's boot entry as both back-ends write it: its manifest plus the content of its `cmdline`
 * artifact, if the image has one; and the check of an entry read back against it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  bootEntryMismatch,
  slotBootEntry,
  type SlotBootEntry,
  type WrittenBootEntry,
} from '../../../core/boot/slot-entry.ts';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { SlotId, SlotManifest } from '../../../core/slots/slot.ts';

/** The boot entry of `slot`, reading its `cmdline` artifact (a path relative to `root`). */
export async function readSlotBootEntry(
  root: string,
  slot: SlotId,
  manifest: SlotManifest,
): Promise<SlotBootEntry> {
  const record = manifest.artifacts.cmdline;
  const cmdline = record === undefined ? '' : await readFile(join(root, record.path), 'latin1');
  return slotBootEntry(slot, manifest, cmdline);
}

/** Throw `MOLT_BOOTLOADER_INVALID` unless `written` (undefined: no entry) boots `slot`'s manifest. */
export async function checkWrittenEntry(
  root: string,
  slot: SlotId,
  manifest: SlotManifest,
  written: WrittenBootEntry | undefined,
): Promise<void> {
  const hint =
    'the slot cannot be booted from this entry; upgrade to write the slot and its entry again';
  if (written === undefined)
    throw new MoltError(ErrorCode.BootloaderInvalid, `slot ${slot} has no boot entry`, { hint });
  const mismatch = bootEntryMismatch(await readSlotBootEntry(root, slot, manifest), written);
  if (mismatch !== undefined)
    throw new MoltError(
      ErrorCode.BootloaderInvalid,
      `the boot entry of slot ${slot} does not boot ${manifest.version}: ${mismatch}`,
      { hint },
    );
}
