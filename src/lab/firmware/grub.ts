// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's GRUB: reads `esp/grub/grub.cfg`, `esp/grub/grubenv` and the slots' entry files as
 * GRUB 2.06 with molt's grub.cfg would (core/boot/firmware.ts `grubBoot`), and makes GRUB's own write — `save_env`
 * consuming `next_entry` — in place, as GRUB does on a real ESP.
 */
import { join } from 'node:path';
import { grubBoot } from '../../core/boot/firmware.ts';
import { isMoltError } from '../../core/errors.ts';
import {
  espExists,
  espRead,
  readOptional,
  slotOfCmdline,
  writeInPlace,
  type BootResult,
} from './disk.ts';

export async function bootGrub(root: string): Promise<BootResult> {
  const grubDir = join(root, 'esp', 'grub');
  const cfg = await readOptional(join(grubDir, 'grub.cfg'));
  if (cfg === undefined) return { ok: false, reason: 'GRUB: no grub.cfg on the ESP' };
  const envPath = join(grubDir, 'grubenv');
  const env = await readOptional(envPath);
  let choice;
  try {
    choice = grubBoot(env === undefined ? undefined : new Uint8Array(env), cfg.toString('utf8'), {
      exists: espExists(root),
      read: espRead(root),
    });
  } catch (error) {
    if (isMoltError(error)) return { ok: false, reason: `GRUB: ${error.message}` };
    throw error;
  }
  if (choice.grubenvChanged && choice.newGrubenv !== undefined)
    await writeInPlace(envPath, choice.newGrubenv);
  if (choice.entryId === undefined)
    return {
      ok: false,
      reason: `GRUB: nothing to boot (${choice.errors.join('; ') || 'no menu entries'})`,
    };
  const slot = slotOfCmdline(choice.cmdline);
  if (slot === undefined)
    return {
      ok: false,
      reason: `GRUB: entry ${choice.entryId} has no molt.slot= in its command line`,
    };
  return { ok: true, slot, entryId: choice.entryId, cmdline: choice.cmdline };
}
