// SPDX-License-Identifier: Apache-2.0
/**
 * The build cache (`.molt/images` or `--cache`): one directory per stage and input digest,
 * `base/<digest>`, `molt/<digest>`, `out/<digest>`. An entry is made in a temporary sibling and
 * renamed into place once complete, so an interrupted build never leaves a half entry that a later
 * build would trust; two builds racing for one entry both succeed and one rename wins.
 */
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the entry of `stage` for `name` lives. */
export function entryPath(cache: string, stage: string, name: string): string {
  return join(cache, stage, name);
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null;
}

/**
 * The entry of `stage`/`name`, made by `produce(dir)` when missing (or when `fresh`). Resolves
 * with the entry's path and whether it was already there.
 */
export async function cachedEntry(e: {
  readonly cache: string;
  readonly stage: string;
  readonly name: string;
  readonly fresh: boolean;
  readonly produce: (dir: string) => Promise<void>;
}): Promise<{ dir: string; hit: boolean }> {
  const { fresh, produce } = e;
  const dir = entryPath(e.cache, e.stage, e.name);
  if (!fresh && (await exists(dir))) return { dir, hit: true };
  const tmp = `${dir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  try {
    await produce(tmp);
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    throw error;
  }
  return { dir, hit: false };
}
