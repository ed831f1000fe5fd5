// SPDX-License-Identifier: Apache-2.0
/**
 * The bootloader binary the firmware starts from the removable path `EFI/BOOT/BOOTX64.EFI`, so a
 * machine boots with empty EFI variables: GRUB built by `grub-mkimage`, or systemd-boot's
 * `systemd-bootx64.efi` (Debian's systemd-boot-efi). `--efi-binary` supplies either instead.
 */
import { copyFile, open } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { buildGrubEfi } from './grub-efi.ts';
import { type BootloaderName } from '../../core/boot/bootloaders.ts';

/** Where Debian's systemd-boot-efi installs the binary. */
export const SdBootEfiPath = '/usr/lib/systemd/boot/efi/systemd-bootx64.efi';

/** Refuse a file that is not a PE image (`MZ`): the firmware would skip it and boot nothing. */
async function checkPe(path: string, what: string): Promise<number> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new MoltError(
      ErrorCode.ToolMissing,
      `${what} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      {
        hint: 'apt install systemd-boot-efi (systemd-boot), or pass the EFI binary with --efi-binary',
        cause: error,
      },
    );
  }
  try {
    const head = Buffer.alloc(2);
    await handle.read(head, 0, 2, 0);
    if (head.toString('latin1') !== 'MZ')
      throw new MoltError(ErrorCode.BadInput, `${what} ${path} is not an EFI (PE) binary`, {
        hint: 'pass the bootloader’s .efi file (x86-64) with --efi-binary',
      });
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

/** Put the bootloader binary at `output`; return its size. */
export async function prepareEfiBinary(
  bootloader: BootloaderName,
  output: string,
  given?: string,
): Promise<number> {
  if (given !== undefined) {
    await checkPe(given, '--efi-binary');
    await copyFile(given, output);
  } else if (bootloader === 'grub') {
    await buildGrubEfi(output);
  } else {
    await checkPe(SdBootEfiPath, "systemd-boot's EFI binary");
    await copyFile(SdBootEfiPath, output);
  }
  return checkPe(output, 'the EFI binary');
}
