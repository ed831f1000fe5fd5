// SPDX-License-Identifier: Apache-2.0
/**
 * A real ext4 "EPHEMERAL partition" for tests of the real-machine adapters: a file on a loop
 * device (`losetup -f --show`), labelled `molt-ephemeral` and mounted on a temp dir. Needs root
 * and a free loop device; `loopUnavailable()` says why not, for a skip. `close` kills the holders
 * it started, unmounts everything below the mount point, detaches the device, removes the files.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { mountsAt } from '../agent/adapters/partition-mounts/mountinfo.ts';
import { tempDir } from '../platform/process/managed-process.ts';

const run = promisify(execFile);

/** Why loop partitions cannot be made here, or undefined when they can. */
export async function loopUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (mount, losetup)';
  return run('losetup', ['-f']).then(
    () => undefined,
    () => 'no free loop device',
  );
}

export interface LoopPartition {
  readonly device: string;
  readonly mnt: string;
  mounted(): Promise<boolean>;
  /** A process whose working directory is inside the mount; the returned function ends it. */
  hold(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export async function loopPartition(sizeMiB = 32): Promise<LoopPartition> {
  const dir = await tempDir('ephemeral');
  const img = join(dir.path, 'ephemeral.img');
  const mnt = join(dir.path, 'mnt');
  await mkdir(mnt);
  await run('truncate', ['-s', `${String(sizeMiB)}M`, img]);
  await run('mkfs.ext4', ['-q', '-F', '-L', 'molt-ephemeral', img]);
  const device = (await run('losetup', ['-f', '--show', img])).stdout.trim();
  await run('mount', [device, mnt]);
  const holders: ChildProcess[] = [];
  return {
    device,
    mnt,
    mounted: async () => (await mountsAt(mnt)).some((m) => m.mountPoint === mnt),
    async hold() {
      const child = spawn('sleep', ['300'], { cwd: mnt, stdio: 'ignore' });
      holders.push(child);
      await new Promise((r) => child.once('spawn', r));
      return async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      };
    },
    async close() {
      for (const c of holders) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      for (const m of await mountsAt(mnt))
        await run('umount', [m.mountPoint]).catch(() => undefined);
      await run('losetup', ['-d', device]).catch(() => undefined);
      await dir.remove();
    },
  };
}
