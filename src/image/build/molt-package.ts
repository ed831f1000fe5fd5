// SPDX-License-Identifier: Apache-2.0
/**
 * molt inside the image: the packed package (`npm pack`, or `--molt-package`) unpacked into
 * `/usr/lib/molt` with its production dependencies, cached by the tarball's digest (npm pack is
 * reproducible, so an unchanged checkout packs to the same bytes). Type declarations, TypeScript
 * sources and source maps are dropped: Node never loads them, and they are half of the bytes.
 */
import { copyFile, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { packageRoot } from '../../platform/package-files.ts';
import { cachedEntry } from './cache.ts';
import { fileDigest } from './digest.ts';
import { cacheName, digestOf } from './recipe.ts';
import { runTool } from './tools.ts';

/** Where molt lives in the image. */
export const MoltDir = 'usr/lib/molt';

export interface MoltPackage {
  readonly tgz: string;
  readonly digest: string;
  /** The staged tree: `<dir>/usr/lib/molt`. */
  readonly dir: string;
  readonly hit: boolean;
  /** Whether the checkout's package-lock.json pinned the dependencies. */
  readonly locked: boolean;
}

interface Log {
  readonly onOutput?: (text: string) => void;
}

const isCheckout = async (): Promise<boolean> =>
  (await stat(join(packageRoot, 'src', 'bin', 'molt.ts')).catch(() => null)) !== null;

/**
 * The tarball to install: `--molt-package`, or this molt packed into `tmp`. A checkout is built
 * first (`npm run build`, incremental) and packed without its prepack clean, so an unchanged
 * checkout packs in seconds; `--molt-package "$(npm pack)"` gives a clean build.
 */
export async function moltTarball(
  given: string | undefined,
  tmp: string,
  log: Log,
): Promise<{ tgz: string; lock: string | null }> {
  if (given !== undefined) {
    const st = await stat(given).catch(() => null);
    if (st?.isFile() !== true)
      throw new MoltError(ErrorCode.BadFlag, `--molt-package ${given} is not a file`, {
        hint: 'give the .tgz that `npm pack` wrote',
      });
    return { tgz: given, lock: null };
  }
  const checkout = await isCheckout();
  const run = { step: 'molt package (npm pack)', cwd: packageRoot, ...log };
  const pack = () =>
    runTool(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp, packageRoot],
      run,
    );
  const out = checkout
    ? await checkoutBuildLock(async () => {
        await runTool('npm', ['run', 'build', '--silent'], run);
        return pack();
      })
    : await pack();
  const [packed] = JSON.parse(out) as { filename: string }[];
  if (packed === undefined)
    throw new MoltError(ErrorCode.ImageBuildFailed, 'npm pack wrote no tarball');
  const lock = join(packageRoot, 'package-lock.json');
  const hasLock = checkout && (await stat(lock).catch(() => null)) !== null;
  return { tgz: join(tmp, packed.filename), lock: hasLock ? lock : null };
}

/**
 * `f` while no other process of this checkout builds, cleans or packs it. Image builds run side
 * by side (the VM suites, a lab's VMs, the operator's image, the package test's `npm pack` whose
 * prepack cleans dist/): a build rewrites dist/ — the bundle's chunks among it — and a tarball
 * packed meanwhile held a molt.js importing a chunk it lacked, so the agent of every machine
 * installed from it could not start. The lock is a directory under
 * .molt/ (proper-lockfile: atomic mkdir, refreshed while held, taken over once stale).
 */
export async function checkoutBuildLock<T>(f: () => Promise<T>): Promise<T> {
  const dir = join(packageRoot, '.molt');
  await mkdir(dir, { recursive: true });
  const release = await lock(packageRoot, {
    lockfilePath: join(dir, 'build-and-pack.lock'),
    // A build and pack takes seconds warm and a few minutes cold; a few may queue.
    retries: { retries: 1_200, minTimeout: 250, maxTimeout: 1_000 },
  });
  try {
    return await f();
  } finally {
    await release();
  }
}

const dropped = /\.([cm]?ts|[cm]?js\.map|[cm]?ts\.map)$/;

/** Remove what Node never loads at run time. */
async function slim(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const e of entries) {
    if (e.isFile() && dropped.test(e.name)) await rm(join(e.parentPath, e.name));
  }
}

/** The staged `/usr/lib/molt` for `tgz`, from the cache or installed now. */
export async function ensureMolt(
  tarball: { tgz: string; lock: string | null },
  o: { cache: string; fresh: boolean } & Log,
): Promise<MoltPackage> {
  const digest = digestOf({
    tgz: await fileDigest(tarball.tgz),
    lock: tarball.lock === null ? null : await fileDigest(tarball.lock),
    revision: 1,
  });
  const { dir, hit } = await cachedEntry({
    cache: o.cache,
    stage: 'molt',
    name: cacheName(digest),
    fresh: o.fresh,
    produce: async (tmp) => {
      const target = join(tmp, MoltDir);
      await mkdir(target, { recursive: true });
      const step = {
        step: 'molt package (npm install)',
        ...(o.onOutput && { onOutput: o.onOutput }),
      };
      await runTool(
        'tar',
        ['-xzf', tarball.tgz, '-C', target, '--strip-components=1', '--no-same-owner'],
        step,
      );
      if (tarball.lock !== null) await copyFile(tarball.lock, join(target, 'package-lock.json'));
      await runTool(
        'npm',
        [
          tarball.lock === null ? 'install' : 'ci',
          '--omit=dev',
          '--ignore-scripts',
          '--no-audit',
          '--no-fund',
          '--no-update-notifier',
        ],
        { ...step, cwd: target },
      );
      await slim(target);
    },
  });
  return { tgz: tarball.tgz, digest, dir: join(dir, MoltDir), hit, locked: tarball.lock !== null };
}
