// SPDX-License-Identifier: Apache-2.0
/**
 * Files molt ships beside its code (`package.json`, `deploy/kubernetes/*.yaml`,
 * `scripts/ensure-kube-bins.sh`): found from the package root, the nearest folder above this
 * module whose package.json is molt's. Walking up (rather than a fixed `../..`) finds it from the
 * sources (`src/platform/`), from tsc's output (`dist/platform/`) and from the bundled CLI's
 * chunks (`dist/cli/chunks/`) alike.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** molt's package.json, as far as molt reads it. */
type Manifest = { name?: unknown; version?: unknown };

function manifestAt(dir: string): Manifest | undefined {
  try {
    const m = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    return m.name === 'molt' ? m : undefined;
  } catch {
    return undefined; // no package.json here, or another package's
  }
}

function findRoot(from: string): { dir: string; manifest: Manifest | undefined } {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = manifestAt(dir);
    if (manifest !== undefined) return { dir, manifest };
    if (dirname(dir) === dir) return { dir: join(from, '..', '..'), manifest: undefined };
  }
}

const root = findRoot(import.meta.dirname);

/** The root of the molt package (or checkout) this code runs from. */
export const packageRoot = root.dir;

/** molt's own version, from its package.json ('unknown' if it cannot be read). */
export const packageVersion: string =
  typeof root.manifest?.version === 'string' ? root.manifest.version : 'unknown';

/** A path inside the package, e.g. `packageFile('deploy', 'kubernetes', 'crds.yaml')`. */
export const packageFile = (...parts: string[]): string => join(packageRoot, ...parts);
