// SPDX-License-Identifier: Apache-2.0
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

/** `sha256:<hex>` of a file, or undefined when it does not exist or its size is not `size`. */
export async function fileDigest(path: string, size?: number): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info?.isFile() !== true || (size !== undefined && info.size !== size)) return undefined;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }))
    hash.update(chunk as Buffer);
  return `sha256:${hash.digest('hex')}`;
}
