// SPDX-License-Identifier: Apache-2.0
/**
 * Does the image fit the planned disk? Checked after the pull and before the first write: a real
 * machine needs both a kernel and an initramfs (the initramfs mounts the slot's root by partition
 * label, docs/real-machines.md §3); the root filesystem must fit its slot partition; and the ESP
 * must hold the bootloader plus the kernels of three slots' worth — A, B and the `.next` a pull
 * stages — or the first upgrade would fail for room the installer could have seen coming.
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { partitionOf, PartitionName, type DiskPlan, MiB } from './layout.ts';
import { formatSize } from './size.ts';

/** The artifact sizes of the staged image; `undefined`: the image does not carry it. */
export interface ImageSizes {
  readonly kernel: number | undefined;
  readonly initrd: number | undefined;
  readonly rootfs: number | undefined;
}

/** What the ESP needs beside the kernels: grub.cfg/grubenv or loader files, directories. */
const EspSlackBytes = MiB;

/** Bytes the ESP needs for `image` with an EFI binary of `efiBytes`. */
export function espBytesNeeded(image: ImageSizes, efiBytes: number): number {
  return efiBytes + 3 * ((image.kernel ?? 0) + (image.initrd ?? 0)) + EspSlackBytes;
}

/** Bytes a FAT32 filesystem of `size` can hold: two FATs of 4 bytes per 512-byte cluster. */
export function fatCapacity(size: number): number {
  return size - Math.ceil(size / 512) * 8 - MiB;
}

/** Throw `MOLT_IMAGE_INVALID` / `MOLT_IMAGE_TOO_LARGE` unless `image` suits the planned disk. */
export function checkImageFits(image: ImageSizes, plan: DiskPlan, efiBytes: number): void {
  const missing = [
    image.kernel === undefined ? 'vmlinuz' : undefined,
    image.initrd === undefined ? 'initrd.img' : undefined,
    image.rootfs === undefined ? 'rootfs.img' : undefined,
  ].filter((n) => n !== undefined);
  if (missing.length > 0)
    throw new MoltError(
      ErrorCode.ImageInvalid,
      `the image has no ${missing.join(' and no ')}; a machine that boots from a disk needs a kernel, an initramfs and a root filesystem`,
      { hint: 'build the image with `molt image build`, or add the missing artifacts' },
    );
  const slot = partitionOf(plan, PartitionName.A).size;
  const rootfs = image.rootfs ?? 0;
  if (rootfs > slot)
    throw new MoltError(
      ErrorCode.ImageTooLarge,
      `the image's rootfs.img is ${formatSize(rootfs)} (${String(rootfs)} bytes), larger than a slot of ${formatSize(slot)}`,
      {
        hint: 'give the slots more room with --slot-size (and the disk with it), or make the image smaller',
      },
    );
  const esp = partitionOf(plan, PartitionName.Esp).size;
  const needed = espBytesNeeded(image, efiBytes);
  if (needed > fatCapacity(esp))
    throw new MoltError(
      ErrorCode.ImageTooLarge,
      `the ESP of ${formatSize(esp)} cannot hold the bootloader and three copies of the kernel and initramfs (slot A, slot B, an upgrade's staging): ${formatSize(needed)} needed`,
      { hint: 'give the ESP more room with --esp-size, or make the kernel and initramfs smaller' },
    );
}
