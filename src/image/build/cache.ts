// SPDX-License-Identifier: Apache-2.0
/**
 * The build cache (`.molt/images` or `--cache`): one directory per stage and input digest,
 * `base/<digest>`, `molt/<digest>`, `out/<digest>`. An entry is made in a temporary sibling and
 * renamed into place once complete, so an interrupted build never leaves a half entry that a later
 * build would trust. Builds that want the same entry at once (two VM suites, a lab's image build
 * beside a test's) take turns on a lock of that entry: the second finds it made and uses it. Without
 * the lock both made it, and the later one's replacing it removed the entry under the first while
 * that one was still copying from it.
 */
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';

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
  const dir = entryPath(e.cache, e.stage, e.name);
  if (!e.fresh && (await exists(dir))) return { dir, hit: true };
  await mkdir(join(e.cache, e.stage), { recursive: true });
  const release = await lock(dir, {
    realpath: false,
    lockfilePath: `${dir}.lock`,
    // A cold base (mmdebstrap) takes minutes on two cores; proper-lockfile refreshes a held lock
    // and takes over one whose holder died.
    retries: { retries: 1_800, minTimeout: 250, maxTimeout: 1_000 },
  });
  try {
    if (!e.fresh && (await exists(dir))) return { dir, hit: true };
    await make(dir, e.produce);
    return { dir, hit: false };
  } finally {
    await release();
  }
}

async function make(dir: string, produce: (dir: string) => Promise<void>): Promise<void> {
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
}
