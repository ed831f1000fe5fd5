// SPDX-License-Identifier: Apache-2.0
/**
 * Streaming a blob to a file in one pass (docs/adr/0004 §7, benchmark P5). Chunks are batched to
 * about 1 MiB and written with one `writev` each, straight to the file descriptor; the next batch
 * is read from the network while the previous one is being written, so disk and network overlap.
 * The digest is checked by the stream itself (`streamBlob` hashes as bytes pass), so the bytes are
 * hashed exactly once; the caller must not trust the file before this function returns.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../../core/errors.ts';

const batchBytes = 1024 * 1024;

export interface WriteOptions {
  /** Most bytes accepted; more is `MOLT_IMAGE_TOO_LARGE`. */
  readonly limit: number;
  /** Called after each batch with the number of bytes in it. */
  readonly onBytes: (bytes: number) => void;
}

class Writer {
  private pending: Promise<void> = Promise.resolve();
  private failure: Error | undefined = undefined;
  private readonly handle: FileHandle;
  constructor(handle: FileHandle) {
    this.handle = handle;
  }
  /** Start writing `chunks`, after the previous write; errors surface at the next call or `drain`. */
  async write(chunks: Uint8Array[], bytes: number): Promise<void> {
    await this.drain();
    this.pending = this.handle.writev(chunks).then(
      (r) => {
        if (r.bytesWritten !== bytes) this.failure = new Error(`short write: ${r.bytesWritten} of ${bytes} bytes`);
      },
      (e: unknown) => {
        this.failure = e instanceof Error ? e : new Error(String(e));
      },
    );
  }
  async drain(): Promise<void> {
    await this.pending;
    if (this.failure !== undefined) throw this.failure;
  }
}

function tooLarge(limit: number): MoltError {
  return new MoltError(ErrorCode.ImageTooLarge, `the registry sent more than the ${limit} bytes the image declared or the agent accepts`, {
    hint: 'the layer is larger than its descriptor says; the registry or the image is broken',
  });
}

/** Stream `body` into a new file at `path` (truncating), fsync it, and return the byte count. */
export async function writeStreamToFile(body: ReadableStream<Uint8Array>, path: string, o: WriteOptions): Promise<number> {
  const handle = await open(path, 'w', 0o644);
  const reader = body.getReader();
  const writer = new Writer(handle);
  try {
    const total = await copy(reader, writer, o);
    await handle.sync();
    return total;
  } catch (e) {
    await reader.cancel().catch(() => undefined);
    await writer.drain().catch(() => undefined);
    throw e;
  } finally {
    await handle.close();
  }
}

async function copy(reader: ReadableStreamDefaultReader<Uint8Array>, writer: Writer, o: WriteOptions): Promise<number> {
  let total = 0;
  let batch: Uint8Array[] = [];
  let size = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    total += r.value.byteLength;
    if (total > o.limit) throw tooLarge(o.limit);
    batch.push(r.value);
    size += r.value.byteLength;
    if (size < batchBytes) continue;
    await writer.write(batch, size);
    o.onBytes(size);
    batch = [];
    size = 0;
  }
  if (size > 0) await writer.write(batch, size);
  await writer.drain();
  if (size > 0) o.onBytes(size);
  return total;
}
