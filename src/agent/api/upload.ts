// SPDX-License-Identifier: Apache-2.0
/**
 * A request body streamed to a file, bounded: an etcd snapshot for a restore (docs/adr/0012 §6) is
 * up to gigabytes, far past the 64 KiB JSON bodies, so it is never held in memory. Past `maxBytes`
 * (by Content-Length at once, else while it streams) the file is removed and the request refused.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';

const tooLarge = (maxBytes: number): MoltError =>
  new MoltError(
    ErrorCode.EtcdSnapshotTooLarge,
    `the upload is larger than the agent accepts (${String(maxBytes)} bytes)`,
    { hint: 'an etcd snapshot is at most the database size (2 GiB by default quota)' },
  );

/** A temporary file under `dir` holding `body`; the caller removes it (`remove`). */
export async function receiveFile(o: {
  readonly body: Readable;
  readonly contentLength: string | undefined;
  readonly dir: string;
  readonly maxBytes: number;
}): Promise<{ path: string; bytes: number; remove(): Promise<void> }> {
  const declared = o.contentLength === undefined ? undefined : Number(o.contentLength);
  if (declared !== undefined && declared > o.maxBytes) {
    o.body.resume(); // drain, so the refusal can be read
    throw tooLarge(o.maxBytes);
  }
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  const path = join(o.dir, `upload-${randomBytes(6).toString('hex')}.part`);
  const remove = (): Promise<void> => rm(path, { force: true });
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      done(bytes > o.maxBytes ? tooLarge(o.maxBytes) : null, chunk);
    },
  });
  try {
    await pipeline(o.body, count, createWriteStream(path, { mode: 0o600 }));
  } catch (e) {
    await remove();
    throw e instanceof MoltError
      ? e
      : new MoltError(ErrorCode.BadInput, `the upload broke off: ${(e as Error).message}`);
  }
  if (bytes === 0) {
    await remove();
    throw new MoltError(ErrorCode.BadInput, 'the upload is empty', {
      hint: 'send the snapshot as the body, Content-Type application/octet-stream',
    });
  }
  return { path, bytes, remove };
}
