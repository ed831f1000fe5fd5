// SPDX-License-Identifier: Apache-2.0
/**
 * A slot's partition as the block-device slot store writes it (docs/real-machines.md §1): a block
 * device on a machine (`/dev/disk/by-partlabel/molt-b`), or a region of a disk image file (the
 * installer, tests, benchmark P5) — `{path, offset, size}` either way.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { ArtifactTarget } from '../../ports/slot-store.ts';

export interface Partition {
  /** A block device, or a disk image (or any pre-sized file). */
  readonly path: string;
  /** Where the partition starts in `path`, in bytes. @default 0 */
  readonly offset?: number;
  /**
   * The partition's size in bytes. @default a device's size (from sysfs), or a file's size less
   * `offset`
   */
  readonly size?: number;
}

function invalid(path: string, why: string, cause?: unknown): MoltError {
  return new MoltError(ErrorCode.MachineInvalid, `slot partition ${path} ${why}`, {
    hint: 'the machine config names each slot partition (disk.slots); see docs/real-machines.md §1',
    ...(cause !== undefined && { cause }),
  });
}

/**
 * A block device's size: `stat().size` is 0 for a device, so it is read from
 * `/sys/class/block/<name>/size` (512-byte sectors, whatever the device's block size).
 */
async function deviceBytes(path: string): Promise<number> {
  const name = basename(await realpath(path));
  const text = await readFile(`/sys/class/block/${name}/size`, 'utf8').catch((e: unknown) => {
    throw invalid(path, `is a block device (${name}) without a size in /sys/class/block`, e);
  });
  const sectors = Number(text.trim());
  if (!Number.isSafeInteger(sectors)) throw invalid(path, `has an unreadable size ${text.trim()}`);
  return sectors * 512;
}

/** The region a pull writes the slot's root filesystem into. */
export async function partitionTarget(p: Partition): Promise<ArtifactTarget> {
  const offset = p.offset ?? 0;
  const info = await stat(p.path).catch((e: unknown) => {
    throw invalid(p.path, 'does not exist', e);
  });
  let whole: number;
  if (info.isBlockDevice()) whole = await deviceBytes(p.path);
  else if (info.isFile()) whole = info.size;
  else throw invalid(p.path, 'is neither a block device nor a file');
  const capacity = p.size ?? whole - offset;
  if (!Number.isSafeInteger(offset) || offset < 0 || capacity < 0 || offset + capacity > whole)
    throw invalid(p.path, `has no ${capacity} bytes at offset ${offset} (it holds ${whole})`);
  return { path: p.path, offset, capacity };
}
