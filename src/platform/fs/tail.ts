// SPDX-License-Identifier: Apache-2.0
/** The end of a file that may be large (a log, a crash record): read it without reading it all. */
import { open } from 'node:fs/promises';

/** At most the last `bytes` of `path` as UTF-8 ('' when the file cannot be opened). */
export async function tailOf(path: string, bytes: number): Promise<string> {
  const handle = await open(path, 'r').catch(() => undefined);
  if (handle === undefined) return '';
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}
