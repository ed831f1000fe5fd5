// SPDX-License-Identifier: Apache-2.0
/**
 * Unpacking a tar layer into a staging area without letting tar touch the file system: `tar`'s
 * `Parser` only parses; every entry is checked (`checkTarEntry`) before a byte of it is written, and
 * molt itself writes and hashes each file. Entry data is consumed synchronously while the parser is
 * fed, so the parser never buffers more than one chunk. Every size is held: the layer
 * may not send a byte more than its descriptor declares, and what it inflates to (headers included)
 * may not pass the image cap left over; gzip is inflated as a bounded stream (`inflate.ts`), never
 * by the parser, so a gzip bomb is refused within one chunk of the cap, with memory bounded.
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fsync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { Parser, type ReadEntry } from 'tar';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { checkTarEntry, checkTotal } from '../../../core/slots/contract.ts';
import type { StagedArtifact } from '../../../core/slots/manifest.ts';
import type { ArtifactName } from '../../../core/slots/slot.ts';
import type { BlobSink } from '../../../oci/index.ts';
import { Inflater } from './inflate.ts';
import { tooLarge, type BlobPump } from './write-file.ts';

const fsyncAsync = promisify(fsync);
/** Padding accepted after a tar archive's end-of-archive marker. */
const maxTrailingBytes = 1024 * 1024;

export interface TarLayerInput {
  /** Delivers the layer's bytes and resolves once they hash to the layer digest. */
  readonly pump: BlobPump;
  readonly layerDigest: string;
  /** The descriptor's size: a byte more on the wire is `MOLT_IMAGE_TOO_LARGE`. */
  readonly size: number;
  /** The media type says gzip. */
  readonly gzip: boolean;
  /**
   * Open the file an artifact of `size` bytes (its entry header's) is written to: a new staging
   * file, or its in-place target at `position` (throwing `MOLT_IMAGE_TOO_LARGE` if it does not fit).
   */
  readonly openFile: (name: ArtifactName, size: number) => OpenedFile;
  /** Names already taken by earlier layers (a duplicate is `MOLT_IMAGE_INVALID`). */
  readonly taken: ReadonlySet<ArtifactName>;
  /**
   * Budget left for unpacked bytes (the image cap minus what earlier layers staged): for the files
   * the entry headers declare, and for every byte the layer inflates to.
   */
  readonly budget: number;
  readonly onBytes: (bytes: number) => void;
}

/** A file descriptor open for writing and where the artifact starts in it. */
export interface OpenedFile {
  readonly fd: number;
  readonly position: number;
}

interface OpenFile extends OpenedFile {
  readonly name: ArtifactName;
  readonly hash: Hash;
  size: number;
}

class Unpacker {
  failure: Error | undefined = undefined;
  readonly done: OpenFile[] = [];
  private unpacked = 0;
  /** Bytes the layer inflated to (all of them, handed to the parser or not). */
  private inflated = 0;
  /** The parser saw the end-of-archive marker; `trailing` bytes came after it. */
  archiveEnded = false;
  private trailing = 0;
  private readonly input: TarLayerInput;
  constructor(input: TarLayerInput) {
    this.input = input;
  }

  onEntry(entry: ReadEntry): void {
    try {
      const name = checkTarEntry({ path: entry.path, type: entry.type });
      if (name === undefined || this.failure !== undefined) {
        entry.resume();
        return;
      }
      this.claim(name, entry.size);
      const file: OpenFile = {
        name,
        ...this.input.openFile(name, entry.size),
        hash: createHash('sha256'),
        size: 0,
      };
      this.done.push(file);
      entry.on('data', (chunk: Buffer) => {
        this.write(file, chunk);
      });
    } catch (e) {
      this.fail(e);
      entry.resume();
    }
  }

  /** Hand tar bytes to the parser, holding them to the budget; returns the layer's failure, if any. */
  feed(parser: Parser, chunk: Buffer): Error | undefined {
    if (this.failure !== undefined) return this.failure;
    const refusal = this.refusal(chunk);
    if (refusal !== undefined) {
      this.fail(refusal);
      return refusal;
    }
    if (!this.archiveEnded) parser.write(chunk);
    return this.status();
  }

  /** The failure so far (parser events may have set it). */
  status(): Error | undefined {
    return this.failure;
  }

  private refusal(chunk: Buffer): Error | undefined {
    // tar's Parser inflates a gzip (or zstd) stream it finds by itself, synchronously: refuse it.
    if (this.inflated === 0 && chunk[0] === 0x1f && chunk[1] === 0x8b)
      return new MoltError(
        ErrorCode.ImageInvalid,
        `tar layer ${this.input.layerDigest} holds gzip data its media type does not declare`,
        { hint: 'a gzip tar layer has media type application/vnd.oci.image.layer.v1.tar+gzip' },
      );
    this.inflated += chunk.byteLength;
    try {
      checkTotal(this.inflated, this.input.budget, `the bytes its tar layers unpack to`);
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
    if (this.archiveEnded) this.trailing += chunk.byteLength;
    return this.trailing > maxTrailingBytes ? this.trailingData() : undefined;
  }

  /**
   * Bytes after the end-of-archive marker are not handed to the parser: tar's Parser keeps them all
   * in one growing buffer (concatenated again for every chunk), which is how a bomb of zeros after
   * a small valid archive filled memory. Writers pad an archive to a record (10 KiB for GNU tar);
   * more than {@link maxTrailingBytes} is refused.
   */
  private trailingData(): MoltError {
    return new MoltError(
      ErrorCode.ImageInvalid,
      `tar layer ${this.input.layerDigest} goes on for more than ${maxTrailingBytes} bytes after the end of its archive`,
      { hint: 'a tar layer ends with its end-of-archive marker and a record of padding' },
    );
  }

  fail(e: unknown): void {
    this.failure ??= e instanceof Error ? e : new Error(String(e));
  }

  private claim(name: ArtifactName, size: number): void {
    if (this.input.taken.has(name) || this.done.some((f) => f.name === name))
      throw new MoltError(
        ErrorCode.ImageInvalid,
        `the image carries artifact "${name}" more than once`,
      );
    this.unpacked += size;
    checkTotal(this.unpacked, this.input.budget, 'the files of its tar layers');
  }

  private write(file: OpenFile, chunk: Buffer): void {
    if (this.failure !== undefined) return;
    try {
      for (let off = 0; off < chunk.byteLength;)
        off += writeSync(
          file.fd,
          chunk,
          off,
          chunk.byteLength - off,
          file.position + file.size + off,
        );
      file.hash.update(chunk);
      file.size += chunk.byteLength;
    } catch (e) {
      this.fail(e);
    }
  }
}

/** Parse one tar layer into files; returns each file's size and digest (the layer digest is checked by `pump`). */
export async function unpackTarLayer(
  input: TarLayerInput,
): Promise<Map<ArtifactName, StagedArtifact>> {
  const u = new Unpacker(input);
  const parser = new Parser({ strict: true, zstd: false });
  // 'end' after a clean archive; a strict parser's 'error' may come instead of it.
  const ended = new Promise<void>((resolve) => {
    parser.on('end', resolve);
    parser.on('error', () => {
      resolve();
    });
  });
  listen(parser, u, input.layerDigest);
  const inflater = input.gzip
    ? new Inflater({
        layerDigest: input.layerDigest,
        onData: (chunk) => u.feed(parser, chunk),
      })
    : undefined;
  try {
    const next =
      inflater === undefined
        ? (chunk: Buffer) => feed(u, parser, chunk)
        : (chunk: Buffer) => inflater.write(chunk);
    await input.pump(layerSink(input, u, next));
    await inflater?.end();
    parser.end();
    await ended;
    if (u.failure !== undefined) throw u.failure;
    return await finish(u.done, input.layerDigest);
  } catch (e) {
    inflater?.destroy();
    throw e;
  } finally {
    for (const f of u.done) closeSync(f.fd);
  }
}

function feed(u: Unpacker, parser: Parser, chunk: Buffer): Promise<void> | undefined {
  const failure = u.feed(parser, chunk);
  if (failure !== undefined) throw failure;
  return undefined;
}

function listen(parser: Parser, u: Unpacker, layerDigest: string): void {
  parser.on('eof', () => {
    u.archiveEnded = true;
  });
  parser.on('entry', (e: ReadEntry) => {
    u.onEntry(e);
  });
  parser.on('ignoredEntry', (e: ReadEntry) => {
    u.fail(
      new MoltError(
        ErrorCode.LayerUnsafePath,
        `tar layer entry "${e.path}" has an unsupported type ${e.type}`,
      ),
    );
  });
  parser.on('error', (e: unknown) => {
    u.fail(
      new MoltError(ErrorCode.ImageInvalid, `tar layer ${layerDigest} is not a valid tar archive`, {
        cause: e,
      }),
    );
  });
}

/** The sink the layer's bytes arrive in: held to the descriptor's size before anything else. */
function layerSink(
  input: TarLayerInput,
  u: Unpacker,
  next: (chunk: Buffer) => Promise<void> | undefined,
): BlobSink {
  let received = 0;
  return {
    write(chunk) {
      received += chunk.byteLength;
      if (received > input.size) throw tooLarge(input.size);
      if (u.failure !== undefined) throw u.failure;
      input.onBytes(chunk.byteLength);
      return next(chunk);
    },
  };
}

async function finish(
  files: readonly OpenFile[],
  layerDigest: string,
): Promise<Map<ArtifactName, StagedArtifact>> {
  const out = new Map<ArtifactName, StagedArtifact>();
  for (const f of files) {
    await fsyncAsync(f.fd);
    out.set(f.name, { size: f.size, digest: `sha256:${f.hash.digest('hex')}`, layerDigest });
  }
  return out;
}
