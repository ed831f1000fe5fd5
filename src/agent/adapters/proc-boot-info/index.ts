// SPDX-License-Identifier: Apache-2.0
/**
 * Which boot this is and which slot the bootloader chose, on a real machine: `/proc/cmdline` and
 * the kernel's boot id. The slot is the `molt.slot=` the boot entry carries, so the agent trusts
 * what the bootloader actually booted, not what it asked for. (Under the lab firmware the same
 * facts come from its environment: ../lab/boot-info.ts.)
 */
import { readFile } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { SlotId } from '../../../core/slots/slot.ts';
import type { BootInfo } from '../../ports/boot-info.ts';
import { PstoreDirs, readPstoreCrash } from './pstore.ts';

export function slotFromCmdline(cmdline: string): SlotId {
  const match = /(?:^|\s)molt\.slot=([AB])(?:\s|$)/.exec(cmdline);
  if (match?.[1] !== 'A' && match?.[1] !== 'B') {
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `the kernel command line has no molt.slot=A|B: ${JSON.stringify(cmdline)}`,
      {
        hint: 'boot the machine through a molt boot entry',
      },
    );
  }
  return match[1];
}

/**
 * The boot facts the kernel publishes under `proc` (default `/proc`), and the log of a boot before
 * this one that panicked, from pstore (`pstore`: where to look; pstore.ts).
 */
export async function readProcBootInfo(
  proc = '/proc',
  pstore: readonly string[] = PstoreDirs,
): Promise<BootInfo> {
  const cmdline = await readFile(`${proc}/cmdline`, 'utf8');
  const bootId = (await readFile(`${proc}/sys/kernel/random/boot_id`, 'utf8')).trim();
  const crash = await readPstoreCrash(pstore);
  return { bootId, slot: slotFromCmdline(cmdline), ...(crash !== undefined && { crash }) };
}
