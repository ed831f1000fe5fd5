// SPDX-License-Identifier: Apache-2.0
/**
 * The real GRUB (Debian's grub-efi-amd64-bin modules) as `EFI/BOOT/BOOTX64.EFI`, built the way
 * `grub-install` builds core.img: `grub-mkimage` with the modules molt's grub.cfg needs built in
 * and the prefix `/grub` on the boot device, so GRUB reads `/grub/grub.cfg` from the ESP and its
 * default environment block is `/grub/grubenv` — the files molt's GRUB back-end writes. The QEMU
 * suite (test/qemu/harness) boots this same binary.
 */
import { access } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { run } from './tools.ts';

/** Where grub-efi-amd64-bin puts the x86_64 EFI modules. */
export const GrubEfiModuleDir = '/usr/lib/grub/x86_64-efi';

/** Built in, so nothing is loaded from the ESP (which has no `x86_64-efi/` directory). */
export const GrubModules = [
  'part_gpt',
  'fat',
  'normal',
  'configfile',
  'loadenv',
  'linux',
  'search',
  'search_fs_file',
  'echo',
  'test',
  'regexp',
  'boot',
  'reboot',
  'halt',
  'true',
  'sleep',
] as const;

/** Write the GRUB EFI binary to `output`. */
export async function buildGrubEfi(output: string): Promise<void> {
  await access(`${GrubEfiModuleDir}/moddep.lst`).catch((error: unknown) => {
    throw new MoltError(
      ErrorCode.ToolMissing,
      `GRUB's x86_64-efi modules are not installed (${GrubEfiModuleDir})`,
      {
        hint: 'apt install grub-efi-amd64-bin, or pass a GRUB EFI binary with --efi-binary',
        cause: error,
      },
    );
  });
  await run('grub-mkimage', [
    '-O',
    'x86_64-efi',
    '-d',
    GrubEfiModuleDir,
    '-p',
    '/grub',
    '-o',
    output,
    ...GrubModules,
  ]);
}
