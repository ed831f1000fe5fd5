// SPDX-License-Identifier: Apache-2.0
/**
 * Streaming a blob to a file in one pass (docs/adr/0004 §7, benchmark P5). The registry client
 * hands over each chunk as it arrives (`streamBlobTo`: no web streams, no promise per chunk) and
 * hashes it in the same pass; chunks are batched to a few MiB and written with one `writev` each,
 * straight to the file descriptor, while the next batch is read from the network, so disk and
 * network overlap. Only when a batch is full and the previous write has not finished does the
 * network wait. Writeback starts during the transfer, not at the final fsync. The caller must not
 * trust the file before this function returns.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { BlobSink } from '../../../oci/index.ts';

const MiB = 1024 * 1024;
const batchBytes = 4 * MiB;
/**
 * Start writeback (`fdatasync`, in the thread pool) each time this much more was written, so the
 * disk works while the network does and the final fsync finds little left to write (P5: the final
 * fsync of 256 MiB went from ~250 ms to ~50 ms).
 */
const writebackEvery = 32 * MiB;

export interface WriteOptions {
  /** Most bytes accepted; more is `MOLT_IMAGE_TOO_LARGE`. */
  readonly limit: number;
  /** Called after each batch with the number of bytes in it. */
  readonly onBytes: (bytes: number) => void;
}

/** Delivers a blob's bytes to `sink` (e.g. `client.streamBlobTo`), resolving once they are verified. */
export type BlobPump = (sink: BlobSink) => Promise<number>;

/** The registry sent more than `limit` bytes for a blob. */
export function tooLarge(limit: number): MoltError {
  return new MoltError(
    ErrorCode.ImageTooLarge,
    `the registry sent more than the ${limit} bytes the image declared or the agent accepts`,
    {
      hint: 'the layer is larger than its descriptor says; the registry or the image is broken',
    },
  );
}

/**
 * Write `bytes` of `chunks` at `at`, all of them: a write may be short (the filesystem nearly
 * full), and the rest is written after it — which fails with ENOSPC when there is no room left.
 */
async function writeAll(
  handle: FileHandle,
  chunks: Buffer[],
  at: number,
  bytes: number,
): Promise<void> {
  let done = (await handle.writev(chunks, at)).bytesWritten;
  if (done === bytes) return;
  const all = Buffer.concat(chunks);
  while (done < bytes) {
    const { bytesWritten } = await handle.write(all, done, bytes - done, at + done);
    if (bytesWritten === 0)
      throw Object.assign(new Error('no progress writing'), { code: 'ENOSPC' });
    done += bytesWritten;
  }
}

/** A full filesystem, as a molt error (not a bug in molt); undefined for any other failure. */
export function noSpace(e: unknown): MoltError | undefined {
  if ((e as { code?: unknown } | undefined)?.code !== 'ENOSPC') return undefined;
  return new MoltError(ErrorCode.NoSpace, 'the filesystem being written is full', {
    cause: e,
    hint: 'free space on it or give it more; a control plane keeps its Kubernetes bundles on STATE (`molt install --state-size`)',
  });
}

class FileSink implements BlobSink {
  total = 0;
  private batch: Buffer[] = [];
  private size = 0;
  /** The last write started; it never rejects (its error is kept in `failure`). */
  private pending: Promise<void> = Promise.resolve();
  private busy = false;
  private written = 0;
  private synced = 0;
  /** Early writeback in flight (`fdatasync`), so the final fsync finds little left to write. */
  private syncing: Promise<void> | undefined = undefined;
  private failure: Error | undefined = undefined;
  private readonly handle: FileHandle;
  private readonly o: WriteOptions;
  /** Where the next batch goes in the file: writes are positioned, so a region of a disk works too. */
  private position: number;
  constructor(handle: FileHandle, o: WriteOptions, position: number) {
    this.handle = handle;
    this.o = o;
    this.position = position;
  }

  write(chunk: Buffer): Promise<void> | undefined {
    if (this.failure !== undefined) throw this.failure;
    this.total += chunk.byteLength;
    if (this.total > this.o.limit) throw tooLarge(this.o.limit);
    this.batch.push(chunk);
    this.size += chunk.byteLength;
    if (this.size < batchBytes) return undefined;
    // A full batch: start it now if the disk is free, else pause the network until it is.
    if (!this.busy) {
      this.flush();
      return undefined;
    }
    return this.pending.then(() => {
      if (this.failure !== undefined) throw this.failure;
      this.flush();
    });
  }

  /** Write what is left and wait for every write. */
  async finish(): Promise<void> {
    await this.pending;
    if (this.size > 0) this.flush();
    await this.pending;
    await this.syncing;
    if (this.failure !== undefined) throw this.failure;
  }

  /** After a failure: wait for the writes in flight (the file is about to be closed), write nothing more. */
  async abandon(): Promise<void> {
    this.batch = [];
    this.size = 0;
    await this.pending;
    await this.syncing;
  }

  private startWriteback(): void {
    if (this.syncing !== undefined || this.written - this.synced < writebackEvery) return;
    const upTo = this.written;
    this.syncing = this.handle.datasync().then(
      () => {
        this.synced = upTo;
        this.syncing = undefined;
      },
      (e: unknown) => {
        this.failure ??= e instanceof Error ? e : new Error(String(e));
      },
    );
  }

  private flush(): void {
    const chunks = this.batch;
    const bytes = this.size;
    this.batch = [];
    this.size = 0;
    this.busy = true;
    const at = this.position;
    this.position += bytes;
    this.pending = writeAll(this.handle, chunks, at, bytes).then(
      () => {
        this.busy = false;
        this.written += bytes;
        this.startWriteback();
        this.o.onBytes(bytes);
      },
      (e: unknown) => {
        this.busy = false;
        this.failure ??= noSpace(e) ?? (e instanceof Error ? e : new Error(String(e)));
      },
    );
  }
}

/** Stream a blob (through `pump`) into a new file at `path` (truncating), fsync it, and return the byte count. */
export async function writeBlobToFile(
  pump: BlobPump,
  path: string,
  o: WriteOptions,
): Promise<number> {
  return streamInto(await open(path, 'w', 0o644), 0, pump, o);
}

/**
 * Stream a blob into the open `handle` from byte `position` on, fsync it, close the handle, and
 * return the byte count.
 */
export async function streamInto(
  handle: FileHandle,
  position: number,
  pump: BlobPump,
  o: WriteOptions,
): Promise<number> {
  return drainInto(handle, new FileSink(handle, o, position), pump);
}

/** What {@link drainInto} needs of a sink: the blob's bytes, then finish or abandon. */
export interface DrainingSink extends BlobSink {
  readonly total: number;
  finish(): Promise<void>;
  abandon(): Promise<void>;
}

/**
 * Pump a blob into `sink`, wait for its writes, fsync `handle` (on a device this flushes its
 * volatile cache too) and close it; on failure wait for the writes in flight before closing.
 */
export async function drainInto(
  handle: FileHandle,
  sink: DrainingSink,
  pump: BlobPump,
): Promise<number> {
  try {
    await pump(sink);
    await sink.finish();
    await handle.sync();
    return sink.total;
  } catch (e) {
    await sink.abandon();
    throw e;
  } finally {
    await handle.close();
  }
}
