// SPDX-License-Identifier: Apache-2.0
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

const readChunk = 4 * 1024 * 1024;

/** `sha256:<hex>` of a file, or undefined when it does not exist or its size is not `size`. */
export async function fileDigest(path: string, size?: number): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info?.isFile() !== true || (size !== undefined && info.size !== size)) return undefined;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }))
    hash.update(chunk as Buffer);
  return `sha256:${hash.digest('hex')}`;
}

/**
 * `sha256:<hex>` of exactly `size` bytes from `offset` of a file or block device (a slot's
 * partition), or undefined when it does not exist or holds fewer. A device's `stat().size` is 0,
 * so the bytes read are counted instead of trusting a size.
 */
export async function regionDigest(
  path: string,
  offset: number,
  size: number,
): Promise<string | undefined> {
  const hash = createHash('sha256');
  let read = 0;
  try {
    if (size > 0)
      for await (const chunk of createReadStream(path, {
        start: offset,
        end: offset + size - 1,
        highWaterMark: readChunk,
      })) {
        hash.update(chunk as Buffer);
        read += (chunk as Buffer).byteLength;
      }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return read === size ? `sha256:${hash.digest('hex')}` : undefined;
}
