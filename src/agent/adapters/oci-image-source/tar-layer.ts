// SPDX-License-Identifier: Apache-2.0
/**
 * Unpacking a tar layer into a staging area without letting tar touch the file system: `tar`'s
 * `Parser` only parses (and inflates gzip); every entry is checked (`checkTarEntry`) before a byte
 * of it is written, and molt itself writes and hashes each file. Entry data is consumed
 * synchronously while the parser is fed, so the parser never buffers more than one chunk.
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fsync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Parser, type ReadEntry } from 'tar';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { checkTarEntry, checkTotal } from '../../../core/slots/contract.ts';
import type { StagedArtifact } from '../../../core/slots/manifest.ts';
import type { ArtifactName } from '../../../core/slots/slot.ts';

const fsyncAsync = promisify(fsync);

export interface TarLayerInput {
  readonly body: ReadableStream<Uint8Array>;
  readonly layerDigest: string;
  /** Staging directory (absolute) of an artifact. */
  readonly dirOf: (name: ArtifactName) => string;
  /** Names already taken by earlier layers (a duplicate is `MOLT_IMAGE_INVALID`). */
  readonly taken: ReadonlySet<ArtifactName>;
  /** Budget left for unpacked bytes: a small gzip layer must not unpack into a huge rootfs. */
  readonly budget: number;
  readonly onBytes: (bytes: number) => void;
}

interface OpenFile {
  readonly name: ArtifactName;
  readonly fd: number;
  readonly hash: Hash;
  size: number;
}

class Unpacker {
  failure: Error | undefined = undefined;
  readonly done: OpenFile[] = [];
  private unpacked = 0;
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
        fd: openSync(join(this.input.dirOf(name), name), 'w', 0o644),
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
      for (let off = 0; off < chunk.byteLength;) off += writeSync(file.fd, chunk, off);
      file.hash.update(chunk);
      file.size += chunk.byteLength;
    } catch (e) {
      this.fail(e);
    }
  }
}

/** Parse one tar layer into files; returns each file's size and digest (the layer digest is checked by `body`). */
export async function unpackTarLayer(
  input: TarLayerInput,
): Promise<Map<ArtifactName, StagedArtifact>> {
  const u = new Unpacker(input);
  const parser = new Parser({ strict: true });
  // 'end' after a clean archive; a strict parser's 'error' may come instead of it.
  const ended = new Promise<void>((resolve) => {
    parser.on('end', resolve);
    parser.on('error', () => {
      resolve();
    });
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
      new MoltError(
        ErrorCode.ImageInvalid,
        `tar layer ${input.layerDigest} is not a valid tar archive`,
        { cause: e },
      ),
    );
  });
  try {
    await feed(input, parser, u);
    parser.end();
    await ended;
    if (u.failure !== undefined) throw u.failure;
    return await finish(u.done, input.layerDigest);
  } finally {
    for (const f of u.done) closeSync(f.fd);
  }
}

async function feed(input: TarLayerInput, parser: Parser, u: Unpacker): Promise<void> {
  const reader = input.body.getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      parser.write(Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength));
      if (u.failure !== undefined) throw u.failure;
      input.onBytes(r.value.byteLength);
    }
  } catch (e) {
    await reader.cancel().catch(() => undefined);
    throw e;
  }
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
