// SPDX-License-Identifier: Apache-2.0
// The block-device slot store on partitions that are pre-sized files, regions of a GPT disk image
// made with sfdisk, and loop devices (root only): the SlotStore conformance suite, plus what only
// a partition has (a device's size, a region's bounds, the rest of the disk left alone).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { open, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import type { SlotId } from '../../../core/slots/slot.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { makeDiskImage } from '../../../testkit/disk-image.ts';
import {
  sampleImage,
  slotStoreConformance,
  type SlotStoreHarness,
} from '../../../testkit/slot-store-conformance.ts';
import { stageOnDisk } from '../../../testkit/staged-on-disk.ts';
import type { PullTargets, SlotStore } from '../../ports/slot-store.ts';
import { createBlockSlotStore, type Partition } from './index.ts';
import { partitionTarget } from './partition.ts';

const run = promisify(execFile);
const partitionBytes = 64 * 1024;

/** Flip the first byte of the slot's rootfs, where the store keeps it. */
async function corruptTarget(store: SlotStore, slot: SlotId): Promise<void> {
  const t = (await store.pullTargets?.(slot))?.['rootfs.img'];
  assert.ok(t !== undefined);
  const handle = await open(t.path, 'r+');
  try {
    const b = Buffer.alloc(1);
    await handle.read(b, 0, 1, t.offset);
    b[0] = (b[0] ?? 0) ^ 0xff;
    await handle.write(b, 0, 1, t.offset);
  } finally {
    await handle.close();
  }
}

async function harness(
  partitions: (dir: string) => Promise<Record<SlotId, Partition | string>>,
  cleanup: () => Promise<void> = () => Promise.resolve(),
): Promise<SlotStoreHarness> {
  const dir = await tempDir('block-slot-store');
  const store = createBlockSlotStore(dir.path, { partitions: await partitions(dir.path) });
  const targets = async (slot: SlotId): Promise<PullTargets> =>
    (await store.pullTargets?.(slot)) ?? {};
  return {
    store,
    stage: async (slot, image) => stageOnDisk(dir.path, slot, image, await targets(slot)),
    corrupt: async (slot, name) => {
      assert.equal(name, 'rootfs.img');
      await corruptTarget(store, slot);
    },
    close: async () => {
      await cleanup();
      await dir.remove();
    },
    partitionBytes,
  };
}

async function presized(dir: string, name: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, '');
  await truncate(path, partitionBytes);
  return path;
}

slotStoreConformance('BlockSlotStore, partitions as pre-sized files', () =>
  harness(async (dir) => ({ A: await presized(dir, 'a.part'), B: await presized(dir, 'b.part') })),
);

slotStoreConformance('BlockSlotStore, partitions of a GPT disk image', () =>
  harness(async (dir) => {
    const disk = await makeDiskImage(join(dir, 'disk.img'), 1);
    const size = (s: SlotId) => ({ ...disk.slots[s], size: partitionBytes });
    return { A: size('A'), B: size('B') };
  }),
);

const root = process.getuid?.() === 0;
const loops: string[] = [];
slotStoreConformance('BlockSlotStore, partitions on loop devices', async () => {
  if (!root) throw new Error('loop devices need root');
  const devices: string[] = [];
  return harness(
    async (dir) => {
      for (const name of ['a.part', 'b.part']) {
        const { stdout } = await run('losetup', ['-f', '--show', await presized(dir, name)]);
        devices.push(stdout.trim());
        loops.push(stdout.trim());
      }
      const [A = '', B = ''] = devices;
      return { A, B };
    },
    async () => {
      for (const d of devices) await run('losetup', ['-d', d]);
    },
  );
});

describe('BlockSlotStore partitions', () => {
  it('reads a device size from sysfs (stat says 0) and a region from its offset', async (t) => {
    const dir = await tempDir('partition');
    try {
      const file = await presized(dir.path, 'p');
      assert.deepEqual(await partitionTarget({ path: file }), {
        path: file,
        offset: 0,
        capacity: partitionBytes,
      });
      assert.deepEqual(await partitionTarget({ path: file, offset: 4096 }), {
        path: file,
        offset: 4096,
        capacity: partitionBytes - 4096,
      });
      await assert.rejects(
        partitionTarget({ path: file, offset: 4096, size: partitionBytes }),
        (e: unknown) => isMoltError(e) && e.code === ErrorCode.MachineInvalid,
      );
      await assert.rejects(
        partitionTarget({ path: join(dir.path, 'missing') }),
        (e: unknown) => isMoltError(e) && e.code === ErrorCode.MachineInvalid,
      );
      if (!root) {
        t.skip('loop devices need root');
        return;
      }
      const { stdout } = await run('losetup', ['-f', '--show', file]);
      const device = stdout.trim();
      try {
        assert.deepEqual(await partitionTarget({ path: device }), {
          path: device,
          offset: 0,
          capacity: partitionBytes,
        });
      } finally {
        await run('losetup', ['-d', device]);
      }
    } finally {
      await dir.remove();
    }
  });

  it('writes only inside its partition of the disk image', async () => {
    const dir = await tempDir('partition');
    try {
      const disk = await makeDiskImage(join(dir.path, 'disk.img'), 1);
      const before = await readFile(disk.path);
      const store = createBlockSlotStore(dir.path, { partitions: disk.slots });
      const image = sampleImage('1.0.0');
      const rootfs = new Uint8Array(disk.slots.B.size).fill(0xab);
      const staged = { ...image, artifacts: { ...image.artifacts, 'rootfs.img': rootfs } };
      await stageOnDisk(dir.path, 'B', staged, (await store.pullTargets?.('B')) ?? {});
      const m = await store.install('B', 'op-1');
      assert.deepEqual(await store.verify('B', 'op-1'), m);
      const after = await readFile(disk.path);
      const { offset, size } = disk.slots.B;
      assert.ok(
        after.subarray(0, offset).equals(before.subarray(0, offset)),
        'before B: as it was',
      );
      assert.ok(
        after.subarray(offset + size).equals(before.subarray(offset + size)),
        'after B too',
      );
      assert.equal(after.byteLength, before.byteLength, 'the image was not truncated or grown');
      const { stdout } = await run('sfdisk', ['--json', disk.path]);
      assert.match(stdout, /molt-ephemeral/, 'the partition table is intact');
    } finally {
      await dir.remove();
    }
  });
});

process.on('exit', () => {
  // A failed test must not leave loop devices attached (each harness detaches its own).
  if (loops.length > 0) void run('losetup', ['-d', ...loops]).catch(() => undefined);
});
