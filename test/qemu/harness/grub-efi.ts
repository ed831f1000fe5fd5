// SPDX-License-Identifier: Apache-2.0
/**
 * The real GRUB (Debian's grub-efi-amd64-bin modules) as `EFI/BOOT/BOOTX64.EFI`, built the way
 * `grub-install` builds core.img: `grub-mkimage` with the modules molt's grub.cfg needs built in
 * and the prefix `/grub` on the boot device, so GRUB reads `/grub/grub.cfg` from the ESP and its
 * default environment block is `/grub/grubenv` — the files molt's GRUB back-end writes.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

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
  await run('grub-mkimage', ['-O', 'x86_64-efi', '-p', '/grub', '-o', output, ...GrubModules]);
}
