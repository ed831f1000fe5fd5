// SPDX-License-Identifier: Apache-2.0
/**
 * One power-on of a lab machine up to the kernel: the bootloader chooses an entry from the files
 * molt wrote under `<root>/esp` and makes its own writes on disk, exactly as the real one would
 * (GRUB: grubenv in place; systemd-boot: the counter rename). Whether the chosen slot then boots
 * is the supervisor's business.
 */
import type { BootResult } from './disk.ts';
import { bootGrub } from './grub.ts';
import { bootSdBoot } from './sdboot.ts';
import { type BootloaderName } from '../../core/boot/bootloaders.ts';

export type { BootResult } from './disk.ts';

export function bootMachine(root: string, bootloader: BootloaderName): Promise<BootResult> {
  return bootloader === 'grub' ? bootGrub(root) : bootSdBoot(root);
}
