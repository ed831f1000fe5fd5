// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempDir } from '../../platform/process/managed-process.ts';
import { cachedEntry } from './cache.ts';

describe('the image build cache', () => {
  it('makes an entry once when two builds want it at once; the second uses the first’s', async () => {
    const dir = await tempDir('cache');
    try {
      let made = 0;
      const want = (): ReturnType<typeof cachedEntry> =>
        cachedEntry({
          cache: dir.path,
          stage: 'base',
          name: 'abc',
          fresh: false,
          produce: async (into) => {
            made++;
            await sleep(200); // mmdebstrap's minutes, in short
            await writeFile(join(into, 'rootfs'), `made ${String(made)}`);
          },
        });
      const [a, b] = await Promise.all([want(), want()]);
      assert.equal(made, 1);
      assert.deepEqual([a.hit, b.hit].sort(), [false, true]);
      assert.equal(a.dir, b.dir);
      assert.equal(await readFile(join(a.dir, 'rootfs'), 'utf8'), 'made 1');
    } finally {
      await dir.remove();
    }
  });

  it('leaves no entry when the build fails, and a later build makes it', async () => {
    const dir = await tempDir('cache');
    try {
      const entry = (produce: (into: string) => Promise<void>): ReturnType<typeof cachedEntry> =>
        cachedEntry({ cache: dir.path, stage: 'out', name: 'x', fresh: false, produce });
      await assert.rejects(
        entry(() => Promise.reject(new Error('mksquashfs failed'))),
        /mksquashfs failed/,
      );
      const again = await entry((into) => writeFile(join(into, 'f'), 'ok'));
      assert.equal(again.hit, false);
      assert.equal(await readFile(join(again.dir, 'f'), 'utf8'), 'ok');
    } finally {
      await dir.remove();
    }
  });
});
