// SPDX-License-Identifier: Apache-2.0
// `molt install` onto a block device (a loop device over a disk file; needs root): the same code
// as for a file, writing by offset into the whole device; then the partitions as the kernel shows
// them, a mounted partition refused with MOLT_DISK_IN_USE, and the machine now on the device
// refused with MOLT_DISK_HOLDS_MACHINE.
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MiB, PartitionOrder } from '../../src/core/disk/layout.ts';
import { ErrorCode, isMoltError } from '../../src/core/errors.ts';
import { installDisk } from '../../src/image/install/install-disk.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import {
  partitions,
  repo,
  run,
  sha256,
  startFixture,
  testSizes,
  type Fixture,
} from './install-fixtures.ts';

describe('molt install onto a block device', () => {
  let fx: Fixture;
  let dir: { path: string; remove: () => Promise<void> };
  let loop: string | undefined;
  let mounted: string | undefined;
  before(async () => {
    dir = await tempDir('install-block');
    fx = await startFixture(dir.path);
    const file = join(dir.path, 'backing.img');
    await run('truncate', ['-s', '700M', file]);
    loop = (await run('losetup', ['-f', '--show', file]).catch(() => undefined))?.stdout.trim();
  });
  after(async () => {
    if (mounted !== undefined) await run('umount', [mounted]);
    if (loop !== undefined) await run('losetup', ['-d', loop]);
    await fx.stop();
    await dir.remove();
  });

  it('partitions and fills a loop device, and refuses it while a partition is mounted', async (t) => {
    if (loop === undefined) {
      t.skip('no loop device here (losetup needs root)');
      return;
    }
    const artifacts = await fx.push('1.0.0');
    const machine = await fx.machine('node-block', 'grub');
    const options = {
      ...machine,
      disk: loop,
      image: `${fx.registry.host}/${repo}:1.0.0`,
      insecure: true,
      sizes: testSizes,
    };
    const started = performance.now();
    const result = await installDisk(options);
    console.log(
      `# one install onto ${loop}: ${((performance.now() - started) / 1000).toFixed(2)} s`,
    );
    assert.equal(result.kind, 'block');
    assert.equal(result.plan.diskBytes, 700 * MiB);
    assert.deepEqual(
      (await partitions(loop)).map((p) => p.name),
      PartitionOrder,
    );

    // The kernel's view: partition devices, their labels, slot A's bytes.
    const label = async (n: number) =>
      (
        await run('blkid', ['-p', '-o', 'value', '-s', 'LABEL', `${loop}p${String(n)}`])
      ).stdout.trim();
    assert.equal(await label(4), 'molt-state');
    assert.equal(await label(5), 'molt-ephemeral');
    const rootfs = artifacts['rootfs.img'] ?? new Uint8Array();
    const slotA = await readFile(`${loop}p2`);
    assert.equal(slotA.length, 16 * MiB);
    assert.equal(sha256(slotA.subarray(0, rootfs.length)), sha256(rootfs));

    // Mount STATE as the machine would; the installer now refuses the disk.
    mounted = join(dir.path, 'state');
    await mkdir(mounted);
    await run('mount', ['-o', 'ro', `${loop}p4`, mounted]);
    assert.match(await readFile(join(mounted, 'config.yaml'), 'utf8'), /node: node-block/);
    await assert.rejects(installDisk(options), (e) => {
      assert.ok(isMoltError(e, ErrorCode.DiskInUse), String(e));
      assert.match(e.message, new RegExp(`${loop}p4 is mounted at ${mounted}`));
      return true;
    });

    // Unmounted, it is still a machine's disk: refused, naming it, unless told to replace it.
    await run('umount', [mounted]);
    mounted = undefined;
    await assert.rejects(installDisk(options), (e) => {
      assert.ok(isMoltError(e, ErrorCode.DiskHoldsMachine), String(e));
      assert.match(e.message, new RegExp(`^${loop} is a molt machine's disk: .*node-block`));
      return true;
    });
    const again = await installDisk({ ...options, overwriteMachine: true });
    assert.equal(again.previousNode, 'node-block');
  });
});
