// SPDX-License-Identifier: Apache-2.0
/**
 * Writing an artifact into its target with `O_DIRECT` (docs/adr/0008 §3, benchmark P5): the bytes
 * bypass the page cache, which direct writes also invalidate for their range, so the slot store's
 * read-back (VerifySlot) reads what the device holds, not what the kernel still caches — and the
 * agent does not fill memory with a 1 GiB slot's pages. `O_DIRECT` wants the buffer address, the
 * length and the file offset aligned; JavaScript cannot ask for aligned memory, so one allocation
 * is probed with direct writes at 16-byte steps until the kernel accepts one (at most 256 tries,
 * once per pull). Chunks are copied into two aligned 4 MiB batches: one is written while
 * the network fills the other. The last partial batch is padded with zeros to the alignment when
 * the partition has room (the bytes after the image are unused), else written without `O_DIRECT`.
 * A target that refuses `O_DIRECT` (a file system without it, an unaligned offset) gets the
 * buffered path (`write-file.ts`) instead.
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { BlobSink } from '../../../oci/index.ts';
import type { ArtifactTarget } from '../../ports/slot-store.ts';
import { drainInto, tooLarge, type BlobPump, type WriteOptions } from './write-file.ts';

/** Offsets and lengths of direct writes: 4 KiB suits 512-byte and 4 KiB-sector devices alike. */
const align = 4096;
const batchBytes = 4 * 1024 * 1024;

/** The offset into `memory` at which the kernel accepts a direct write on `fd`, if any. */
function alignedOffset(fd: number, memory: Buffer, position: number): number | undefined {
  for (let k = 0; k < align; k += 16) {
    try {
      writeSync(fd, memory, k, align, position);
      return k;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EINVAL') return undefined;
    }
  }
  return undefined;
}

/**
 * Two aligned batches of memory, or undefined when `target` cannot be written with `O_DIRECT`.
 * The probe writes zeros over the region's first 4 KiB, which the pull is about to overwrite (the
 * slot is unbootable already); a direct read would not do: reading a hole of a sparse disk image
 * is never checked for alignment.
 */
export function alignedBatches(target: ArtifactTarget): [Buffer, Buffer] | undefined {
  if (target.offset % align !== 0 || target.capacity < align) return undefined;
  let fd: number;
  try {
    fd = openSync(target.path, constants.O_WRONLY | constants.O_DIRECT);
  } catch {
    return undefined;
  }
  try {
    const memory = Buffer.alloc(2 * batchBytes + align);
    const k = alignedOffset(fd, memory, target.offset);
    if (k === undefined) return undefined;
    return [
      memory.subarray(k, k + batchBytes),
      memory.subarray(k + batchBytes, k + 2 * batchBytes),
    ];
  } finally {
    closeSync(fd);
  }
}

class DirectSink implements BlobSink {
  total = 0;
  private index = 0;
  private fill = 0;
  private busy = false;
  /** The write of the other batch; it never rejects (its error is kept in `failure`). */
  private pending: Promise<void> = Promise.resolve();
  private failure: Error | undefined = undefined;
  private position: number;
  private readonly handle: FileHandle;
  private readonly batches: [Buffer, Buffer];
  private readonly o: WriteOptions;
  private readonly target: ArtifactTarget;
  constructor(
    handle: FileHandle,
    batches: [Buffer, Buffer],
    target: ArtifactTarget,
    o: WriteOptions,
  ) {
    this.handle = handle;
    this.batches = batches;
    this.target = target;
    this.o = o;
    this.position = target.offset;
  }

  write(chunk: Buffer): Promise<void> | undefined {
    if (this.failure !== undefined) throw this.failure;
    this.total += chunk.byteLength;
    if (this.total > this.o.limit) throw tooLarge(this.o.limit);
    return this.copy(chunk, 0);
  }

  /** Copy `chunk` from `from` on into the batches, starting a write for each one filled. */
  private copy(chunk: Buffer, from: number): Promise<void> | undefined {
    let at = from;
    while (at < chunk.byteLength) {
      const batch = this.batches[this.index] as Buffer;
      const n = chunk.copy(batch, this.fill, at);
      this.fill += n;
      at += n;
      if (this.fill < batch.byteLength) continue;
      // A full batch: the other one must be on disk before it is filled again.
      if (!this.busy) this.flush(batch.byteLength);
      else
        return this.pending.then(() => {
          if (this.failure !== undefined) throw this.failure;
          this.flush(batch.byteLength);
          return this.copy(chunk, at);
        });
    }
    return undefined;
  }

  /** Write `length` bytes of the current batch at the next position; fill the other one next. */
  private flush(length: number, counted = length): void {
    const batch = this.batches[this.index] as Buffer;
    const at = this.position;
    this.position += length;
    this.busy = true;
    this.pending = this.handle.write(batch, 0, length, at).then(
      (r) => {
        this.busy = false;
        if (r.bytesWritten !== length)
          this.failure ??= new Error(`short write: ${r.bytesWritten} of ${length} bytes`);
        else this.o.onBytes(counted);
      },
      (e: unknown) => {
        this.busy = false;
        this.failure ??= e instanceof Error ? e : new Error(String(e));
      },
    );
    this.index = 1 - this.index;
    this.fill = 0;
  }

  /** Write the last partial batch (padded, or without O_DIRECT) and wait for every write. */
  async finish(): Promise<void> {
    await this.pending;
    this.rethrow();
    const tail = this.fill;
    if (tail === 0) return;
    const padded = Math.ceil(tail / align) * align;
    const room = this.target.offset + this.target.capacity - this.position;
    if (padded <= room) {
      (this.batches[this.index] as Buffer).fill(0, tail, padded);
      this.flush(padded, tail);
      await this.pending;
    } else await this.bufferedTail(tail);
    this.rethrow();
  }

  /** Throw what a write in flight failed with (set asynchronously, hence a method). */
  private rethrow(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private async bufferedTail(tail: number): Promise<void> {
    const handle = await open(this.target.path, constants.O_WRONLY);
    try {
      const r = await handle.write(this.batches[this.index] as Buffer, 0, tail, this.position);
      if (r.bytesWritten !== tail)
        throw new Error(`short write: ${r.bytesWritten} of ${tail} bytes`);
      await handle.sync();
      this.o.onBytes(tail);
    } finally {
      await handle.close();
    }
  }

  /** After a failure: wait for the write in flight (the file is about to be closed). */
  async abandon(): Promise<void> {
    await this.pending;
  }
}

/** Stream a blob into `target` with `O_DIRECT` through `batches`, fsync it, return the byte count. */
export async function writeDirect(
  pump: BlobPump,
  target: ArtifactTarget,
  batches: [Buffer, Buffer],
  o: WriteOptions,
): Promise<number> {
  const handle = await open(target.path, constants.O_WRONLY | constants.O_DIRECT);
  return drainInto(handle, new DirectSink(handle, batches, target, o), pump);
}
