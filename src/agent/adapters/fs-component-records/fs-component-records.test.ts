// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { componentRecordsPath, createFsComponentRecords } from './index.ts';

const record = {
  spec: { name: 'kube-apiserver', binary: '/b', args: ['--a=1'], env: {}, port: 6443, hash: 'h' },
  version: 'v1.36.3',
  bundle: `r/k@sha256:${'1'.repeat(64)}`,
};

describe('component records on disk', () => {
  it('reads nothing before the first save, then what was saved', async () => {
    const { path, remove } = await tempDir('records');
    try {
      const r = createFsComponentRecords(path);
      assert.deepEqual(await r.load(), {});
      await r.save({ 'kube-apiserver': record });
      assert.deepEqual(await createFsComponentRecords(path).load(), { 'kube-apiserver': record });
    } finally {
      await remove();
    }
  });

  it('refuses a file it did not write, rather than fall back to the initial binaries', async () => {
    const { path, remove } = await tempDir('records');
    try {
      await mkdir(join(path, 'state', 'kubernetes'), { recursive: true });
      for (const text of ['{', '{"components": {"x": {"spec": 1}}}']) {
        await writeFile(componentRecordsPath(path), text);
        await assert.rejects(createFsComponentRecords(path).load(), (e: unknown) =>
          isMoltError(e, ErrorCode.MachineInvalid),
        );
      }
    } finally {
      await remove();
    }
  });
});
