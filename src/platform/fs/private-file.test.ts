// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isMoltError } from '../../core/errors.ts';
import { tempDir } from '../process/managed-process.ts';
import { assertPrivate, writePrivateFile } from './private-file.ts';

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

describe('files that hold secrets', () => {
  it('are written 0600, also over an existing file others could read', async () => {
    const dir = await tempDir('private');
    try {
      const path = join(dir.path, 'config.yaml');
      await writePrivateFile(path, 'password: one\n');
      assert.equal(await modeOf(path), 0o600);
      await chmod(path, 0o644);
      assert.equal(await modeOf(path), 0o644);
      await writePrivateFile(path, 'password: two\n');
      assert.equal(await modeOf(path), 0o600);
      assert.equal(await readFile(path, 'utf8'), 'password: two\n');
    } finally {
      await dir.remove();
    }
  });

  it('are refused with MOLT_SECRET_EXPOSED and the chmod that fixes it when others can read them', async () => {
    const dir = await tempDir('private');
    try {
      const path = join(dir.path, 'node.key');
      await writeFile(path, 'key', { mode: 0o600 });
      await assertPrivate(path, 'a key');
      for (const mode of [0o640, 0o604, 0o660]) {
        const loose = join(dir.path, `k-${mode.toString(8)}`);
        await writeFile(loose, 'key', { mode });
        await assert.rejects(
          assertPrivate(loose, 'a key'),
          (e) =>
            isMoltError(e, 'MOLT_SECRET_EXPOSED') &&
            e.message.includes(loose) &&
            e.hint === `chmod 600 ${loose}`,
        );
      }
    } finally {
      await dir.remove();
    }
  });
});
