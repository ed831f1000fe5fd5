// SPDX-License-Identifier: Apache-2.0
/**
 * Lays a staged machine onto the disk, by byte offset into the whole disk — so the same code
 * writes a disk image file and a block device, and a file needs no loop device: the GPT with
 * `sfdisk`, the ESP with `mkfs.vfat --offset` + mtools (`mcopy -i DISK@@OFFSET`), STATE and
 * EPHEMERAL with `mke2fs -d DIR -E offset=N`, slot A with positioned writes that are hashed on the
 * way out and read back before anything else is written. Called only after every check passed.
 */
import { createHash } from 'node:crypto';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import {
  partitionOf,
  PartitionName,
  sfdiskScript,
  MiB,
  SectorBytes,
  type DiskPlan,
  type PlannedPartition,
} from '../../core/disk/layout.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { StagedMachine } from './stage.ts';
import type { DiskTarget } from './target.ts';
import { mtoolsEnv, run } from './tools.ts';

const ChunkBytes = 4 * MiB;

/** Progress lines for people (`writing slot A …`). */
export type Log = (line: string) => void;

async function withDisk<T>(
  path: string,
  flags: string,
  use: (h: FileHandle) => Promise<T>,
): Promise<T> {
  const handle = await open(path, flags);
  try {
    return await use(handle);
  } finally {
    await handle.close();
  }
}

/** Copy `file` to `offset` of the disk, hashing what is written; fsync; return `sha256:…`. */
async function writeAt(disk: FileHandle, file: string, offset: number): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(ChunkBytes);
  await withDisk(file, 'r', async (source) => {
    for (let done = 0; ;) {
      const { bytesRead } = await source.read(buffer, 0, ChunkBytes, done);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      for (let written = 0; written < bytesRead;) {
        const r = await disk.write(chunk, written, bytesRead - written, offset + done + written);
        written += r.bytesWritten;
      }
      done += bytesRead;
    }
  });
  await disk.sync();
  return `sha256:${hash.digest('hex')}`;
}

/** Hash `size` bytes of the disk from `offset`. */
async function hashAt(disk: FileHandle, offset: number, size: number): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(ChunkBytes);
  for (let done = 0; done < size;) {
    const { bytesRead } = await disk.read(
      buffer,
      0,
      Math.min(ChunkBytes, size - done),
      offset + done,
    );
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    done += bytesRead;
  }
  return `sha256:${hash.digest('hex')}`;
}

/** Slot A: the rootfs, verified against the image's digest by reading the partition back. */
async function writeSlotA(disk: string, plan: DiskPlan, staged: StagedMachine): Promise<void> {
  const slot = partitionOf(plan, PartitionName.A);
  const record = staged.manifest.artifacts['rootfs.img'];
  const size = staged.sizes.rootfs ?? 0;
  await withDisk(disk, 'r+', async (handle) => {
    const written = await writeAt(handle, staged.rootfs, slot.offset);
    const readBack = await hashAt(handle, slot.offset, size);
    if (written !== record?.digest || readBack !== record.digest)
      throw new MoltError(
        ErrorCode.SlotVerifyFailed,
        `slot A on ${disk} reads back as ${readBack} (written ${written}), not the image's ${String(record?.digest)}`,
        {
          hint: 'the disk lost or changed what was written; check it (dmesg, smartctl) and install again',
        },
      );
    // Slot B holds nothing yet: clear its first MiB, where a filesystem left there would be found.
    const b = partitionOf(plan, PartitionName.B);
    await handle.write(Buffer.alloc(Math.min(MiB, b.size)), 0, Math.min(MiB, b.size), b.offset);
  });
}

async function writeEsp(disk: string, esp: PlannedPartition, dir: string): Promise<void> {
  // One sector a cluster keeps a small ESP above FAT32's 65,525-cluster minimum (firmware refuses less).
  const clusters = esp.size < 512 * MiB ? ['-s', '1'] : [];
  await run('mkfs.vfat', [
    '-I',
    '-F',
    '32',
    ...clusters,
    '-n',
    'MOLT-ESP',
    '--offset',
    String(esp.offset / SectorBytes),
    disk,
    String(esp.size / 1024),
  ]);
  const names = await readdir(dir);
  const image = `${disk}@@${String(esp.offset)}`;
  await run('mcopy', ['-s', '-Q', '-m', '-i', image, ...names.map((n) => join(dir, n)), '::/'], {
    env: mtoolsEnv,
  });
}

async function writeExt4(
  disk: string,
  part: PlannedPartition,
  label: string,
  dir?: string,
): Promise<void> {
  // nodiscard: mke2fs would discard the whole file or device it is given, not just the partition.
  await run('mke2fs', [
    '-q',
    '-F',
    '-t',
    'ext4',
    '-L',
    label,
    ...(dir === undefined ? [] : ['-d', dir]),
    '-E',
    `offset=${String(part.offset)},nodiscard`,
    disk,
    `${String(part.size / 1024)}k`,
  ]);
}

/** Write everything: table, slot A (verified), ESP, STATE, EPHEMERAL; then flush the disk. */
export async function writeDisk(
  target: DiskTarget,
  plan: DiskPlan,
  staged: StagedMachine,
  log: Log,
): Promise<void> {
  const disk = target.path;
  if (target.kind === 'file') {
    // 0600 from the moment it exists: STATE's private key and config lie on it in the clear.
    const handle = await open(disk, target.exists ? 'r+' : 'wx', 0o600);
    try {
      if (target.bytes < plan.diskBytes) await handle.truncate(plan.diskBytes);
    } finally {
      await handle.close();
    }
  }
  log(`partitioning ${disk} (GPT, 5 partitions)`);
  await run('sfdisk', ['--quiet', '--wipe', 'always', disk], { input: sfdiskScript(plan) });
  log(
    `writing slot A (${String(Math.ceil((staged.sizes.rootfs ?? 0) / MiB))} MiB) and reading it back`,
  );
  await writeSlotA(disk, plan, staged);
  log('formatting the ESP (FAT32) and copying the bootloader, kernel and initramfs');
  await writeEsp(disk, partitionOf(plan, PartitionName.Esp), staged.espDir);
  log('formatting STATE (ext4) with the machine config, PKI and slot manifest');
  await writeExt4(disk, partitionOf(plan, PartitionName.State), 'molt-state', staged.stateDir);
  log('formatting EPHEMERAL (ext4)');
  await writeExt4(disk, partitionOf(plan, PartitionName.Ephemeral), 'molt-ephemeral');
  // The tools wrote through their own descriptors; fsync on the disk flushes the page cache of
  // the file, or of the whole block device, whoever dirtied it.
  await withDisk(disk, 'r+', (handle) => handle.sync());
  // Tell the kernel about the new partitions from the table as written: sfdisk asked it to
  // re-read, but a kernel built without GPT support (some VM kernels) then shows none. Best
  // effort: the disk is complete, and the machine reads its table when it boots.
  if (target.kind === 'block') await run('partx', ['--update', disk]).catch(() => undefined);
}
