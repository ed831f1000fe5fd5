// SPDX-License-Identifier: Apache-2.0
// The documents are part of what molt ships: docs/README.md lists every one of them (and names no
// file that is not there), and no relative link or path in the README, CONTRIBUTING.md or docs/
// leaves the repository — a clone is all an adopter has.
import assert from 'node:assert/strict';
import { access, readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const root = resolve(import.meta.dirname, '../..');
const docs = join(root, 'docs');

/** Every file under `dir`, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** The documents a reader of the repository reads: README, CONTRIBUTING and docs/**.md. */
async function documents(): Promise<string[]> {
  const inDocs = (await filesUnder(docs)).filter((f) => f.endsWith('.md'));
  return ['README.md', 'CONTRIBUTING.md', ...inDocs.map((f) => join('docs', f))];
}

/** Relative targets a document points at: markdown links and backticked `../` paths. */
function relativeTargets(text: string): string[] {
  const links = [...text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1] ?? '');
  const ticked = [...text.matchAll(/`(\.\.\/[^`\s]+)`/g)].map((m) => m[1] ?? '');
  return [...links, ...ticked].filter((t) => t !== '' && !/^[a-z]+:/i.test(t));
}

describe('the documents', () => {
  it('are all listed in docs/README.md, which names no file that is not there', async () => {
    const index = await readFile(join(docs, 'README.md'), 'utf8');
    const files = (await filesUnder(docs)).filter((f) => f !== 'README.md');
    const unlisted = files.filter((f) => !index.includes(`\`${f}\``));
    assert.deepEqual(unlisted, [], 'docs/README.md lists each document as `path`');
    const named = [...index.matchAll(/`([\w./-]+\.(?:md|yaml))`/g)].map((m) => m[1] ?? '');
    const missing: string[] = [];
    for (const n of named) if (!(await exists(resolve(docs, n)))) missing.push(n);
    assert.deepEqual(missing, [], 'every path docs/README.md names exists');
  });

  it('link only to files inside the repository that exist', async () => {
    const broken: string[] = [];
    for (const doc of await documents()) {
      const text = await readFile(join(root, doc), 'utf8');
      for (const target of relativeTargets(text)) {
        const path = resolve(root, dirname(doc), target);
        const outside = relative(root, path).startsWith('..');
        if (outside || !(await exists(path)))
          broken.push(`${doc}: ${target}${outside ? ' (outside the repository)' : ''}`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
