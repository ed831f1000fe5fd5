// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { scratchDir } from '../../../testkit/scratch-dir.ts';
import { holdStoreConformance } from '../../../testkit/hold-store-conformance.ts';
import { createMemoryHoldStore } from '../../ports/hold-store.fake.ts';
import { createFsHoldStore, holdPath } from './index.ts';

holdStoreConformance('memory fake', () => Promise.resolve(createMemoryHoldStore()));
holdStoreConformance('file', async () => createFsHoldStore(await scratchDir('hold')));

describe('file hold store', () => {
  it('keeps the hold across store instances (agent restarts, reboots)', async () => {
    const root = await scratchDir('hold');
    const hold = {
      reason: 'disk swap',
      until: '2026-11-24T06:00:00.000Z',
      setBy: { name: 'root', role: 'admin' as const },
      setAt: '2026-11-23T06:00:00.000Z',
    };
    await createFsHoldStore(root).save(hold);
    assert.deepEqual(await createFsHoldStore(root).load(), hold);
    await createFsHoldStore(root).save(undefined);
    assert.equal(await createFsHoldStore(root).load(), undefined);
  });

  it('refuses a hold file it did not write, naming it', async () => {
    const root = await scratchDir('hold');
    await mkdir(dirname(holdPath(root)), { recursive: true });
    for (const text of ['{"reason":', '{"reason":"x"}']) {
      await writeFile(holdPath(root), text);
      await assert.rejects(
        createFsHoldStore(root).load(),
        (e) => isMoltError(e, ErrorCode.MachineInvalid) && e.message.includes(holdPath(root)),
      );
    }
  });
});
