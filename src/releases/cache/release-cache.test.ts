// SPDX-License-Identifier: Apache-2.0
// One conformance suite for the ReleaseCache port, run against every implementation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileReleaseCache } from './file-cache.ts';
import { InMemoryReleaseCache } from './memory-cache.ts';
import { emptyState, type ReleaseCache, type RepositoryState } from './types.ts';

const digestA = `sha256:${'a'.repeat(64)}`;
const digestB = `sha256:${'b'.repeat(64)}`;

const sample: RepositoryState = {
  tags: { '1.8.0': digestA, '1.8.0-rev2': digestA, '1.9.0': digestB },
  images: {
    'linux/amd64': {
      [digestA]: {
        ok: true,
        labels: { 'dev.molt.channels': 'stable' },
        created: '2026-01-01T00:00:00Z',
      },
      [digestB]: { ok: false, code: 'MOLT_CONFIG_INVALID', reason: 'not JSON' },
    },
  },
  signatures: { [`${digestA} abcd`]: { format: 'cosign-legacy' } },
};

interface Subject {
  readonly name: string;
  /** A fresh cache, and a function that opens the same store again (a new process for files). */
  make(): Promise<{ cache: ReleaseCache; reopen: () => ReleaseCache; done: () => Promise<void> }>;
}

const subjects: readonly Subject[] = [
  {
    name: 'InMemoryReleaseCache',
    make: () => {
      const cache = new InMemoryReleaseCache();
      return Promise.resolve({ cache, reopen: () => cache, done: () => Promise.resolve() });
    },
  },
  {
    name: 'FileReleaseCache',
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'molt-cache-conf-'));
      const path = join(dir, 'sub', 'cache.json');
      const done = (): Promise<void> => rm(dir, { recursive: true, force: true });
      return { cache: new FileReleaseCache(path), reopen: () => new FileReleaseCache(path), done };
    },
  },
];

for (const subject of subjects) {
  describe(`ReleaseCache conformance: ${subject.name}`, () => {
    it('loads an empty state, without warnings, for a key never saved', async () => {
      const s = await subject.make();
      const loaded = await s.cache.load('reg/acme/installer');
      assert.deepEqual(loaded, { state: emptyState(), warnings: [] });
      await s.done();
    });

    it('returns what was saved, from a reopened store', async () => {
      const s = await subject.make();
      assert.deepEqual(await s.cache.save('reg/acme/installer', sample), []);
      const loaded = await s.reopen().load('reg/acme/installer');
      assert.deepEqual(loaded, { state: sample, warnings: [] });
      await s.done();
    });

    it('keeps repositories apart and replaces a key on save', async () => {
      const s = await subject.make();
      await s.cache.save('reg/a', sample);
      await s.cache.save('reg/b', emptyState());
      await s.cache.save('reg/a', { ...sample, tags: {} });
      assert.deepEqual((await s.reopen().load('reg/a')).state, { ...sample, tags: {} });
      assert.deepEqual((await s.reopen().load('reg/b')).state, emptyState());
      await s.done();
    });

    it('is not affected by callers mutating a loaded state', async () => {
      const s = await subject.make();
      await s.cache.save('k', sample);
      const loaded = await s.cache.load('k');
      (loaded.state.tags as Record<string, string>)['1.8.0'] = digestB;
      assert.equal((await s.cache.load('k')).state.tags['1.8.0'], digestA);
      await s.done();
    });
  });
}
