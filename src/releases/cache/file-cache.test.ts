// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write.ts';
import { FileReleaseCache } from './file-cache.ts';
import { cacheFileName, defaultCachePath } from './paths.ts';
import { cacheKind, cacheSchemaVersion } from './schema.ts';
import { cacheKey, emptyState } from './types.ts';

const digest = `sha256:${'c'.repeat(64)}`;
const state = { tags: { '1.0.0': digest }, images: {}, signatures: {} };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'molt-file-cache-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('FileReleaseCache', () => {
  const corrupt: readonly (readonly [string, string, RegExp])[] = [
    [
      'truncated JSON',
      '{"kind":"molt.releases.cache","version":1,"repositories":{',
      /not valid JSON/,
    ],
    [
      'a foreign schema version',
      JSON.stringify({ kind: cacheKind, version: 99, repositories: {} }),
      /schema version 99/,
    ],
    ['some other JSON file', JSON.stringify({ hello: 'world' }), /not a molt release cache/],
    [
      'a bad digest inside',
      JSON.stringify({
        kind: cacheKind,
        version: cacheSchemaVersion,
        repositories: { k: { ...state, tags: { a: 'nope' } } },
      }),
      /not a molt release cache/,
    ],
  ];
  for (const [what, content, message] of corrupt) {
    it(`reports ${what} as MOLT_CACHE_CORRUPT, starts empty, and rebuilds the file on save`, async () => {
      await withDir(async (dir) => {
        const path = join(dir, 'cache.json');
        await writeFile(path, content);
        const cache = new FileReleaseCache(path);
        const loaded = await cache.load('k');
        assert.deepEqual(loaded.state, emptyState());
        assert.equal(loaded.warnings.length, 1);
        assert.equal(loaded.warnings[0]?.code, 'MOLT_CACHE_CORRUPT');
        assert.match(loaded.warnings[0].message, message);
        assert.deepEqual(await cache.save('k', state), []);
        assert.deepEqual(await new FileReleaseCache(path).load('k'), { state, warnings: [] });
      });
    });
  }

  it('warns with MOLT_CACHE_UNAVAILABLE when the path cannot be written (a directory is in the way)', async () => {
    await withDir(async (dir) => {
      const path = join(dir, 'cache.json');
      await mkdir(path);
      const cache = new FileReleaseCache(path);
      assert.equal((await cache.load('k')).warnings[0]?.code, 'MOLT_CACHE_UNAVAILABLE');
      assert.equal((await cache.save('k', state))[0]?.code, 'MOLT_CACHE_UNAVAILABLE');
    });
  });
});

describe('writeFileAtomic', () => {
  it('replaces the file whole and leaves no temporary files behind', async () => {
    await withDir(async (dir) => {
      const path = join(dir, 'deep', 'f.json');
      await writeFileAtomic(path, 'old');
      await writeFileAtomic(path, 'new');
      assert.equal(await readFile(path, 'utf8'), 'new');
      assert.deepEqual(await readdir(join(dir, 'deep')), ['f.json']);
    });
  });

  it('keeps the old file intact when the write fails', async () => {
    await withDir(async (dir) => {
      const path = join(dir, 'f.json');
      await writeFileAtomic(path, 'old');
      // A directory where the temp file's rename target is makes rename fail after the write.
      const target = join(dir, 'blocked');
      await mkdir(join(target, 'child'), { recursive: true });
      await assert.rejects(writeFileAtomic(target, 'new'));
      assert.equal(await readFile(path, 'utf8'), 'old');
      assert.deepEqual((await readdir(dir)).sort(), ['blocked', 'f.json']);
    });
  });

  it('never lets concurrent writers produce a mixed file', async () => {
    await withDir(async (dir) => {
      const path = join(dir, 'f.json');
      const bodies = Array.from({ length: 20 }, (_, i) => String(i).repeat(10_000));
      await Promise.all(bodies.map((b) => writeFileAtomic(path, b)));
      assert.ok(bodies.includes(await readFile(path, 'utf8')));
      assert.deepEqual(await readdir(dir), ['f.json']);
    });
  });
});

describe('cache paths', () => {
  it('uses XDG_CACHE_HOME when absolute, else ~/.cache', () => {
    const name = cacheFileName('127.0.0.1:5000', 'acme/installer');
    assert.equal(
      defaultCachePath({ XDG_CACHE_HOME: '/x/c', HOME: '/h' }, '127.0.0.1:5000', 'acme/installer'),
      `/x/c/molt/releases/${name}`,
    );
    assert.equal(
      defaultCachePath({ XDG_CACHE_HOME: 'rel', HOME: '/h' }, '127.0.0.1:5000', 'acme/installer'),
      `/h/.cache/molt/releases/${name}`,
    );
    assert.equal(
      defaultCachePath({ HOME: '/h' }, '127.0.0.1:5000', 'acme/installer'),
      `/h/.cache/molt/releases/${name}`,
    );
  });

  it('makes safe, distinct file names for keys that sanitise alike', () => {
    const a = cacheFileName('reg', 'a/b_c');
    const b = cacheFileName('reg', 'a_b/c');
    assert.match(a, /^[a-z0-9._-]+\.json$/);
    assert.notEqual(a, b);
    assert.equal(cacheFileName('http://REG:5000/', 'x'), cacheFileName('reg:5000', 'x'));
    assert.equal(cacheKey('https://reg:5000', 'acme/installer'), 'reg:5000/acme/installer');
  });
});
