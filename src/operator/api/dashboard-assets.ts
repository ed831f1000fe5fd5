// SPDX-License-Identifier: Apache-2.0
/**
 * The dashboard's files as its listener serves them: the page, its stylesheet and its ES modules
 * (`src/dashboard/`, TypeScript written for the browser), found in the package root's `src/` or
 * `dist/`, which mirror each other, so the same lookup works in a source checkout — where
 * `npm run molt`, the tests and the demo run molt from `.ts` — and in the built package. From `dist/` the modules are tsc's JavaScript, served as they are; from `src/`
 * they are the sources with their types stripped and their `./x.ts` imports renamed `./x.js`.
 *
 * Only an allow-list is served, fixed when the listener starts: no URL is ever joined to a
 * filesystem path, so `..` or a file beside the dashboard is a 404 like any unknown route. URLs
 * mirror the tree (`/dashboard/fleet-grid.js` ↔ `dashboard/fleet-grid.{ts,js}`), which is what
 * lets the browser resolve the modules' relative imports with no bundler and no import map.
 */
import { readdir, readFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { packageRoot } from '../../platform/package-files.ts';

/** Which tree the dashboard is read from. */
export interface DashboardTree {
  /** The folder holding `dashboard/` and `core/`: `src/` of a checkout or `dist/` of the package. */
  readonly root: string;
  /** `source`: TypeScript, served with types stripped; `built`: tsc's JavaScript, served as is. */
  readonly form: 'source' | 'built';
}

/**
 * The tree a module runs from: `src/` of the package root for the sources (`.ts`), `dist/` for the
 * built JavaScript — tsc's modules or the bundle's chunks (`dist/bin/chunks/`) alike.
 */
export function treeOf(moduleUrl: string, root = packageRoot): DashboardTree {
  const form = fileURLToPath(moduleUrl).endsWith('.ts') ? 'source' : 'built';
  return { root: join(root, form === 'source' ? 'src' : 'dist'), form };
}

/**
 * The page and its stylesheet: not modules, so tsc does not emit them; `npm run build` copies them
 * into `dist/dashboard/` (scripts/build-assets.ts).
 */
export const dashboardPageFiles = ['index.html', 'style.css'] as const;

/**
 * The modules outside `dashboard/` the page may import values from (eslint.config.js holds the
 * dashboard's sources to them): core's words and its time formats, both without imports of their
 * own. Whatever else the page imports from core and protocol is types, erased.
 */
const shared = ['core/rollout/vocabulary', 'core/time'];

/** One file the listener serves. */
export interface DashboardAsset {
  readonly contentType: string;
  readonly body: string;
}

const contentTypes = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
} as const;

/** URL path → file (relative to the tree's root) and its type; modules as `.js` URLs. */
async function allowList(
  tree: DashboardTree,
): Promise<Map<string, [string, keyof typeof contentTypes]>> {
  const ext = tree.form === 'source' ? '.ts' : '.js';
  const modules = (await readdir(join(tree.root, 'dashboard')))
    .filter((f) => f.endsWith(ext) && !f.endsWith(`.test${ext}`) && !f.endsWith('.d.ts'))
    .map((f) => `dashboard/${f.slice(0, -ext.length)}`);
  const files = new Map<string, [string, keyof typeof contentTypes]>([
    ['/', ['dashboard/index.html', 'html']],
    ['/dashboard/style.css', ['dashboard/style.css', 'css']],
  ]);
  for (const m of [...modules, ...shared]) files.set(`/${m}.js`, [`${m}${ext}`, 'js']);
  return files;
}

/**
 * Read every file the listener serves, once: the map is the cache (a source module is stripped
 * when the listener starts, not per request). A missing file fails here, at the operator's start,
 * rather than as a 404 in someone's browser.
 */
export async function loadDashboard(
  tree: DashboardTree,
): Promise<ReadonlyMap<string, DashboardAsset>> {
  const entries = await Promise.all(
    [...(await allowList(tree))].map(async ([url, [file, type]]) => {
      const text = await readAsset(join(tree.root, file));
      const body = type === 'js' && tree.form === 'source' ? toJavaScript(text) : text;
      return [url, { contentType: contentTypes[type], body }] as const;
    }),
  );
  return new Map(entries);
}

async function readAsset(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new MoltError(ErrorCode.Internal, `the dashboard's ${path} cannot be read`, {
      hint: 'a package built with `tsc -b` alone lacks the page: build with `npm run build`',
      cause: e,
    });
  }
}

/** Relative `.ts` specifiers of static imports and re-exports (`from './x.ts'`, `import '../y.ts'`). */
const relativeTs = /(\b(?:from|import)\s*)(['"])(\.{1,2}\/[^'"\r\n]*)\.ts\2/g;

/** The browser's name for a source module's relative imports: `./x.ts` → `./x.js` (as tsc emits). */
export const renameImports = (code: string): string => code.replace(relativeTs, '$1$2$3.js$2');

/** A dashboard source as the browser runs it: types stripped (positions kept), imports renamed. */
export const toJavaScript = (source: string): string => renameImports(stripTypes(source));

/**
 * `stripTypeScriptTypes` without its ExperimentalWarning. Node prints that warning once per process
 * to stderr, which is the operator's log (and the lab's and the tests' process output), where a
 * warning about an experimental feature reads like a fault of the operator. Only that warning is
 * dropped, and only during this synchronous call — nothing else runs meanwhile, and
 * `process.emitWarning` is put back even if stripping throws. Only a source checkout strips; the
 * built package serves tsc's output.
 */
function stripTypes(source: string): string {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was; called on process
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const isStrip =
      rest[0] === 'ExperimentalWarning' && String(warning).startsWith('stripTypeScriptTypes');
    if (!isStrip) Reflect.apply(emitWarning, process, [warning, ...rest]);
  };
  try {
    return stripTypeScriptTypes(source);
  } finally {
    process.emitWarning = emitWarning;
  }
}
