// SPDX-License-Identifier: Apache-2.0
// The real EPHEMERAL adapter on a real ext4 partition: a file on a loop device, mounted on a temp
// dir, with real umount/mount/mkfs.ext4 and a real process holding it. Needs root and loop
// devices (the project's test machine has both); skipped with the reason otherwise.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createPartitionMounts } from '../../src/agent/adapters/partition-mounts/index.ts';
import { mountsAt } from '../../src/agent/adapters/partition-mounts/mountinfo.ts';
import { ErrorCode, isMoltError } from '../../src/core/errors.ts';
import { loopPartition, loopUnavailable } from '../../src/testkit/loop-partition.ts';
import { mountsConformance } from '../../src/testkit/mounts-conformance.ts';
import { rejectsWithCode } from '../../src/testkit/registry-conformance.ts';

const run = promisify(execFile);
const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

const why = await loopUnavailable();

if (why !== undefined) {
  it('partition mounts on a loop device', { skip: why }, () => undefined);
} else {
  mountsConformance('ext4 partition on a loop device', async () => {
    const p = await loopPartition();
    return {
      mounts: createPartitionMounts({ mountPoint: p.mnt, device: p.device }),
      mounted: () => p.mounted(),
      hold: () => p.hold(),
      put: (name) => writeFile(join(p.mnt, name), 'data'),
      has: (name) => exists(join(p.mnt, name)),
      close: () => p.close(),
    };
  });

  describe('partition mounts on a loop device', () => {
    const parts: Awaited<ReturnType<typeof loopPartition>>[] = [];
    const partition = async () => {
      const p = await loopPartition();
      parts.push(p);
      return p;
    };
    after(async () => {
      for (const p of parts) await p.close();
    });

    it('names the process that holds a busy mount', async () => {
      const p = await partition();
      const letGo = await p.hold();
      try {
        await assert.rejects(
          createPartitionMounts({ mountPoint: p.mnt }).release(),
          (e: unknown) =>
            isMoltError(e, ErrorCode.MountBusy) &&
            /held by \d+ \(sleep\)/.test(e.message) &&
            e.message.includes(p.mnt),
        );
      } finally {
        await letGo();
      }
    });

    it('unmounts what a stopped service left mounted below it, deepest first', async () => {
      const p = await partition();
      const pods = join(p.mnt, 'kubelet', 'pods', 'x', 'volumes');
      await mkdir(pods, { recursive: true });
      await run('mount', ['-t', 'tmpfs', 'tmpfs', pods]);
      await createPartitionMounts({ mountPoint: `${p.mnt}/` }).release();
      assert.deepEqual(await mountsAt(p.mnt), []);
    });

    it('formats the partition behind the mount point with molt’s label', async () => {
      const p = await partition();
      await writeFile(join(p.mnt, 'old'), 'x');
      // No device given: the wipe finds it in mountinfo.
      const mounts = createPartitionMounts({ mountPoint: p.mnt, device: p.device });
      await createPartitionMounts({ mountPoint: p.mnt }).wipe('op-9');
      const label = (await run('blkid', ['-s', 'LABEL', '-o', 'value', p.device])).stdout.trim();
      assert.equal(label, 'molt-ephemeral');
      assert.equal(await exists(join(p.mnt, 'old')), false);
      assert.equal(await exists(join(p.mnt, '.molt-wiped-op-9')), true);
      await mounts.mount();
    });

    it('refuses to mount without a device or an fstab entry: MOLT_MOUNT_FAILED', async () => {
      const p = await partition();
      const mounts = createPartitionMounts({ mountPoint: p.mnt });
      await mounts.release();
      await rejectsWithCode(mounts.mount(), ErrorCode.MountFailed, p.mnt);
      assert.equal(await p.mounted(), false);
    });
  });
}
