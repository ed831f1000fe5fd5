// SPDX-License-Identifier: Apache-2.0
/**
 * Content digests of the build's inputs: a file (streamed), and a directory tree (names, kinds,
 * modes, symlink targets and file contents, in sorted order), so an overlay or a deploy file that
 * changes by one byte or one mode bit makes a new image, and one that does not reuses the cache.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';

/** `sha256:<hex>` of a file's bytes. */
export async function fileDigest(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return `sha256:${hash.digest('hex')}`;
}

/** `sha256:<hex>` of a directory tree; `what` names it in the error when it is not a directory. */
export async function treeDigest(dir: string, what: string): Promise<string> {
  const top = await lstat(dir).catch(() => null);
  if (top?.isDirectory() !== true)
    throw new MoltError(ErrorCode.BadFlag, `${what} ${dir} is not a directory`);
  const hash = createHash('sha256');
  await walk(dir, '', hash);
  return `sha256:${hash.digest('hex')}`;
}

async function walk(root: string, rel: string, hash: ReturnType<typeof createHash>): Promise<void> {
  const names = (await readdir(join(root, rel))).sort();
  for (const name of names) {
    const path = join(rel, name);
    const st = await lstat(join(root, path));
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) {
      hash.update(`L ${path} ${await readlink(join(root, path))}\n`);
    } else if (st.isDirectory()) {
      hash.update(`D ${path} ${mode}\n`);
      await walk(root, path, hash);
    } else if (st.isFile()) {
      hash.update(`F ${path} ${mode} ${await fileDigest(join(root, path))}\n`);
    } else {
      throw new MoltError(
        ErrorCode.BadFlag,
        `${join(root, path)} is not a file, directory or symlink`,
        { hint: 'overlays hold regular files, directories and symlinks only' },
      );
    }
  }
}
