// SPDX-License-Identifier: Apache-2.0
/**
 * {@link Mounts} on a real machine: EPHEMERAL is the ext4 partition `molt-ephemeral` mounted at
 * `disk.ephemeral` (docs/real-machines.md §2). The executor releases it after StopServices (the
 * services are what hold it) and before the slot is touched; a busy mount fails the step, and the
 * abort mounts it again (a no-op: it never went away) and restarts what was stopped.
 *
 * - release: unmount everything at or below the mount point, deepest first (a stopped kubelet
 *   leaves its pods' volume mounts behind, as Talos's UnmountPodMounts handles); never lazily, so
 *   "released" means nothing can still write to it. Busy → `MOLT_MOUNT_BUSY` naming the holders.
 * - mount: `mount DEVICE POINT` when a device is given, else `mount POINT` (the image's fstab).
 * - wipe: a fresh ext4 (`mkfs.ext4 -L molt-ephemeral`) on the partition the mount point is backed
 *   by, then a marker `.molt-wiped-<operation>` in the new filesystem: a re-run of the same
 *   operation (crash after the wipe, services already writing) finds it and wipes nothing.
 */
import { execFile } from 'node:child_process';
import { access, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Mounts } from '../../ports/mounts.ts';
import { fsyncDir } from '../fs/atomic-write.ts';
import { holdersOf, mountsAt } from './mountinfo.ts';

const run = promisify(execFile);

export interface PartitionMountsOptions {
  /** Where EPHEMERAL is mounted. */
  readonly mountPoint: string;
  /**
   * The partition, when it is not (or not only) in /etc/fstab; the one formatted when nothing is
   * mounted. @default /dev/disk/by-partlabel/molt-ephemeral
   */
  readonly device?: string;
  /** Bound on each mount, umount and mkfs. @default 60000 */
  readonly timeoutMs?: number;
}

const defaultDevice = '/dev/disk/by-partlabel/molt-ephemeral';

function stderrOf(error: unknown): string {
  const e = error as { stderr?: string; message?: string };
  return (e.stderr ?? '').trim() || (e.message ?? String(error));
}

export function createPartitionMounts(o: PartitionMountsOptions): Mounts {
  const point = o.mountPoint.replace(/(.)\/+$/, '$1');
  const timeout = o.timeoutMs ?? 60_000;
  const mountedHere = async () => (await mountsAt(point)).find((m) => m.mountPoint === point);

  async function release(): Promise<void> {
    // Each round unmounts the deepest mount; stacked mounts at one point take a round each.
    for (let round = 0; round < 64; round += 1) {
      const [deepest] = await mountsAt(point);
      if (deepest === undefined) return;
      try {
        await run('umount', [deepest.mountPoint], { timeout });
      } catch (error) {
        const still = (await mountsAt(point)).some((m) => m.mountPoint === deepest.mountPoint);
        if (still) throw await busy(deepest.mountPoint, stderrOf(error));
      }
    }
    throw await busy(point, 'mounts keep appearing');
  }

  /** Mount `device`, or by fstab when none is given. */
  async function mount(device = o.device): Promise<void> {
    if ((await mountedHere()) !== undefined) return;
    const args = device === undefined ? [point] : [device, point];
    try {
      await run('mount', args, { timeout });
    } catch (error) {
      if ((await mountedHere()) !== undefined) return;
      throw new MoltError(
        ErrorCode.MountFailed,
        `cannot mount EPHEMERAL at ${point}: ${stderrOf(error)}`,
        {
          hint: `the OS image must mount PARTLABEL=molt-ephemeral at ${point} (/etc/fstab)`,
          retryable: true,
        },
      );
    }
  }

  async function wipe(operationId: string): Promise<void> {
    const marker = join(point, `.molt-wiped-${operationId}`);
    // Mounted to read the marker; a filesystem too damaged to mount is formatted all the same.
    const mountError = await mount().then(
      () => undefined,
      (e: unknown) => e,
    );
    const here = await mountedHere();
    if (here !== undefined && (await exists(marker))) return;
    const device = here?.source ?? o.device ?? defaultDevice;
    if (!(await stat(device).catch(() => undefined))?.isBlockDevice())
      throw new MoltError(
        ErrorCode.MountFailed,
        `will not format ${device} (EPHEMERAL at ${point}): not a block device`,
        {
          hint: 'EPHEMERAL must be a partition of its own',
          ...(mountError === undefined ? {} : { cause: mountError }),
        },
      );
    await release();
    try {
      await run('mkfs.ext4', ['-q', '-F', '-L', 'molt-ephemeral', device], { timeout });
    } catch (error) {
      throw new MoltError(ErrorCode.MountFailed, `mkfs.ext4 ${device}: ${stderrOf(error)}`, {
        retryable: true,
      });
    }
    await mount(device); // the partition just formatted, whatever fstab says
    // The marker is written last: a wipe cut short runs again in full.
    await writeFile(marker, `${new Date().toISOString()}\n`);
    await fsyncDir(point);
  }

  return { release, mount: () => mount(), wipe };
}

async function busy(mountPoint: string, why: string): Promise<MoltError> {
  const holders = await holdersOf(mountPoint).catch(() => []);
  const by = holders.length === 0 ? '' : ` (held by ${holders.join(', ')})`;
  return new MoltError(ErrorCode.MountBusy, `${mountPoint} is busy${by}: ${why}`, {
    hint: 'stop what holds EPHEMERAL (a service outside the role’s units?), then retry the upgrade',
    details: { mountPoint, holders },
  });
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );
