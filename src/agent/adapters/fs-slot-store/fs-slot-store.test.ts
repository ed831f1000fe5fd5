// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { areaDir, artifactPath } from '../../../core/slots/layout.ts';
import type { StagedRecord } from '../../../core/slots/manifest.ts';
import type { ArtifactName, SlotId } from '../../../core/slots/slot.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { sampleImage, slotStoreConformance } from '../../../testkit/slot-store-conformance.ts';
import { createFsSlotStore } from './index.ts';
import { writeStaged } from './staging.ts';
import { stageOnDisk } from '../../../testkit/staged-on-disk.ts';

const stage = stageOnDisk;

async function corrupt(root: string, slot: SlotId, name: ArtifactName): Promise<void> {
  const path = join(root, artifactPath(slot, name));
  const bytes = await readFile(path);
  bytes[0] = (bytes[0] ?? 0) ^ 0xff;
  await writeFile(path, bytes);
}

slotStoreConformance('FsSlotStore', async () => {
  const dir = await tempDir('slot-store');
  return {
    store: createFsSlotStore(dir.path),
    stage: (slot, image) => stage(dir.path, slot, image),
    corrupt: (slot, name) => corrupt(dir.path, slot, name),
    close: dir.remove,
  };
});

describe('FsSlotStore after a crash', () => {
  it('finishes an install interrupted after the ESP rename, with the generation chosen before it', async () => {
    const dir = await tempDir('slot-store');
    try {
      const store = createFsSlotStore(dir.path);
      await stage(dir.path, 'A', sampleImage('1.0.0'));
      await store.install('A', 'op-1');
      await store.markReady('A', 'op-1');
      await stage(dir.path, 'A', sampleImage('1.1.0'));
      await store.markWriting('A', 'op-2');
      // What install does first: fix the generation, then rename the ESP area. Then "crash".
      await stage(dir.path, 'B', sampleImage('9.0.0'));
      const staged = JSON.parse(
        await readFile(join(dir.path, 'slots/a.next/staged.json'), 'utf8'),
      ) as StagedRecord;
      await writeStaged(dir.path, { ...staged, generation: 2 });
      await rm(join(dir.path, areaDir('A', 'esp')), { recursive: true });
      await rename(join(dir.path, areaDir('A', 'esp', true)), join(dir.path, areaDir('A', 'esp')));
      await rm(join(dir.path, areaDir('A', 'slot')), { recursive: true });
      assert.equal(await store.manifest('A'), undefined, 'a half-installed slot has no manifest');
      const m = await store.install('A', 'op-2');
      assert.equal(m.version, '1.1.0');
      assert.equal(m.generation, 2);
      assert.deepEqual(await store.verify('A', 'op-2'), m);
      await store.markReady('A', 'op-2');
      assert.deepEqual((await readdir(join(dir.path, 'slots/a'))).sort(), [
        'rootfs.img',
        'slot.json',
      ]);
      assert.equal(
        (await store.staged('B'))?.version,
        '9.0.0',
        "the other slot's staging area is untouched",
      );
    } finally {
      await dir.remove();
    }
  });

  it('finishes an install interrupted after the slot rename (record moved along)', async () => {
    const dir = await tempDir('slot-store');
    try {
      const store = createFsSlotStore(dir.path);
      await stage(dir.path, 'B', sampleImage('2.0.0'));
      const staged = JSON.parse(
        await readFile(join(dir.path, 'slots/b.next/staged.json'), 'utf8'),
      ) as StagedRecord;
      await writeStaged(dir.path, { ...staged, generation: 7 });
      for (const area of ['esp', 'slot'] as const)
        await rename(join(dir.path, areaDir('B', area, true)), join(dir.path, areaDir('B', area)));
      assert.equal(await store.staged('B'), undefined);
      const m = await store.install('B', 'op-9');
      assert.equal(m.generation, 7);
      assert.deepEqual(await store.verify('B', 'op-9'), m);
      assert.deepEqual(await store.install('B', 'op-9'), m, 'and a further re-run is a no-op');
    } finally {
      await dir.remove();
    }
  });

  it('does not report a staged image whose files were truncated', async () => {
    const dir = await tempDir('slot-store');
    try {
      const store = createFsSlotStore(dir.path);
      await stage(dir.path, 'A', sampleImage('1.0.0'));
      await writeFile(join(dir.path, artifactPath('A', 'rootfs.img', true)), 'x');
      assert.equal(await store.staged('A'), undefined);
    } finally {
      await dir.remove();
    }
  });
});
