// SPDX-License-Identifier: Apache-2.0
/**
 * The Debian part of the operator image: what the Node binary links (libc6, libstdc++6,
 * libgcc-s1), CA certificates and time zones, extracted by mmdebstrap's `extract` variant — the
 * packages' files and their dependencies' (openssl, debconf), with no dpkg, shell, apt or
 * maintainer script, none of which a container that only runs Node needs. Cached like the OS
 * image's base (cache.ts), by the digest of its recipe.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cachedEntry } from '../build/cache.ts';
import { cacheName, DefaultMirrors, digestOf, sourceLine, Suite } from '../build/recipe.ts';
import { runTool } from '../build/tools.ts';

/** Bump when the way the base is made changes without any input changing. */
const RecipeRevision = 1;

export const OperatorBasePackages = [
  'ca-certificates',
  'libc6',
  'libgcc-s1',
  'libstdc++6',
  'tzdata',
] as const;

export interface OperatorBaseRecipe {
  readonly revision: number;
  readonly suite: string;
  readonly variant: 'extract';
  readonly mirrors: readonly string[];
  readonly packages: readonly string[];
}

/** The recipe for the given `--mirror` sources (none: Debian's bookworm, updates and security). */
export function operatorBaseRecipe(mirrors: readonly string[]): OperatorBaseRecipe {
  return {
    revision: RecipeRevision,
    suite: Suite,
    variant: 'extract',
    mirrors: mirrors.length === 0 ? [...DefaultMirrors] : mirrors.map(sourceLine),
    packages: [...OperatorBasePackages],
  };
}

/** The mmdebstrap command line that makes `recipe` into `dir/rootfs.tar`. */
export function operatorMmdebstrapArgs(recipe: OperatorBaseRecipe, dir: string): string[] {
  return [
    '--mode=root',
    `--variant=${recipe.variant}`,
    '--format=tar',
    `--include=${recipe.packages.join(',')}`,
    '--aptopt=Acquire::Retries "3"',
    recipe.suite,
    join(dir, 'rootfs.tar'),
    ...recipe.mirrors,
  ];
}

/** A cached operator base. */
export interface OperatorBase {
  readonly digest: string;
  readonly tar: string;
  readonly hit: boolean;
  /** When it was made (ISO 8601, seconds): the image's `created`. */
  readonly created: string;
}

/** The base for `recipe`, from the cache or extracted now (about half a minute). */
export async function ensureOperatorBase(
  recipe: OperatorBaseRecipe,
  o: { cache: string; fresh: boolean; onOutput?: (text: string) => void },
): Promise<OperatorBase> {
  const digest = digestOf(recipe);
  const { dir, hit } = await cachedEntry({
    cache: o.cache,
    stage: 'operator-base',
    name: cacheName(digest),
    fresh: o.fresh,
    produce: async (tmp) => {
      await runTool('mmdebstrap', operatorMmdebstrapArgs(recipe, tmp), {
        step: 'operator base (mmdebstrap)',
        ...(o.onOutput && { onOutput: o.onOutput }),
      });
      const created = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      await writeFile(
        join(tmp, 'base.json'),
        `${JSON.stringify({ digest, recipe, created }, null, 2)}\n`,
      );
    },
  });
  const meta = JSON.parse(await readFile(join(dir, 'base.json'), 'utf8')) as { created: string };
  return { digest, tar: join(dir, 'rootfs.tar'), hit, created: meta.created };
}
