// SPDX-License-Identifier: Apache-2.0
/**
 * The base tree: Debian bookworm minbase with systemd, the kernel and initramfs-tools, made by
 * mmdebstrap and cached by the digest of its recipe (recipe.ts). molt's initramfs files are put in
 * before any package installs, so the kernel's own postinst builds the initramfs with them, once;
 * the customize hook (deploy/image/base/customize.sh) takes the kernel and initramfs out of /boot,
 * prunes the modules and records the package list.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageFile } from '../../platform/package-files.ts';
import { cacheName, digestOf, type BaseRecipe } from './recipe.ts';
import { cachedEntry } from './cache.ts';
import { treeDigest } from './digest.ts';
import { runTool } from './tools.ts';

export const InitramfsFiles = packageFile('deploy', 'image', 'initramfs-tools');
export const BaseHooks = packageFile('deploy', 'image', 'base');

/** A cached base tree. */
export interface Base {
  readonly digest: string;
  readonly dir: string;
  readonly tar: string;
  readonly vmlinuz: string;
  readonly initrd: string;
  /** `uname -r` of the kernel, e.g. `6.1.0-56-amd64`. */
  readonly kernel: string;
  /** Debian package → version. */
  readonly packages: Readonly<Record<string, string>>;
  readonly hit: boolean;
  /** When the tree was made (ISO 8601); squashfs timestamps use it, so rebuilds match. */
  readonly created: string;
}

/** Digest of the files the base is built with (initramfs-tools config and hooks, customize). */
export async function baseFilesDigest(): Promise<string> {
  return digestOf([
    await treeDigest(InitramfsFiles, 'initramfs files'),
    await treeDigest(BaseHooks, 'base hooks'),
  ]);
}

const quote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** The mmdebstrap command line that makes `recipe` into `dir/rootfs.tar`. */
export function mmdebstrapArgs(recipe: BaseRecipe, dir: string): string[] {
  return [
    '--mode=root',
    '--variant=minbase',
    '--format=tar',
    `--include=${recipe.packages.join(',')}`,
    ...recipe.dpkg.map((o) => `--dpkgopt=${o}`),
    '--aptopt=Acquire::Retries "3"',
    `--setup-hook=mkdir -p "$1/etc/initramfs-tools" && cp -R ${quote(`${InitramfsFiles}/.`)} "$1/etc/initramfs-tools/"`,
    `--customize-hook=sh ${quote(join(BaseHooks, 'customize.sh'))} "$1" ${quote(dir)} ${recipe.pruneModules ? 'prune' : 'keep'}`,
    recipe.suite,
    join(dir, 'rootfs.tar'),
    ...recipe.mirrors,
  ];
}

function parsePackages(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const [name, version] = line.trim().split(' ');
    if (name !== undefined && name !== '' && version !== undefined) out[name] = version;
  }
  return out;
}

/** The base tree for `recipe`, from the cache or built now (about a minute and a half). */
export async function ensureBase(
  recipe: BaseRecipe,
  o: { cache: string; fresh: boolean; onOutput?: (text: string) => void },
): Promise<Base> {
  const digest = digestOf(recipe);
  const { dir, hit } = await cachedEntry({
    cache: o.cache,
    stage: 'base',
    name: cacheName(digest),
    fresh: o.fresh,
    produce: async (tmp) => {
      await runTool('mmdebstrap', mmdebstrapArgs(recipe, tmp), {
        step: 'base tree (mmdebstrap)',
        ...(o.onOutput && { onOutput: o.onOutput }),
      });
      await writeFile(
        join(tmp, 'base.json'),
        `${JSON.stringify({ digest, recipe, created: new Date().toISOString() }, null, 2)}\n`,
      );
    },
  });
  const meta = JSON.parse(await readFile(join(dir, 'base.json'), 'utf8')) as { created: string };
  return {
    digest,
    dir,
    tar: join(dir, 'rootfs.tar'),
    vmlinuz: join(dir, 'vmlinuz'),
    initrd: join(dir, 'initrd.img'),
    kernel: (await readFile(join(dir, 'kernel'), 'utf8')).trim(),
    packages: parsePackages(await readFile(join(dir, 'packages.txt'), 'utf8')),
    hit,
    created: meta.created,
  };
}
