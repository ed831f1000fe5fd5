// SPDX-License-Identifier: Apache-2.0
/**
 * EPHEMERAL as a directory (`ephemeral/` under the machine root) standing for the partition, as
 * lab machines and tests keep it. "Released" is a marker in
 * `run/` (cleared by every boot, as unmounting is); a file `ephemeral/.busy` stands for a process
 * holding the mount, so tests can make release fail the way a busy mount does.
 */
import { access, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Mounts } from '../../ports/mounts.ts';
import { fsyncDir } from '../fs/atomic-write.ts';

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

export function createDirMounts(root: string): Mounts {
  const ephemeral = join(root, 'ephemeral');
  const released = join(root, 'run', 'ephemeral.released');
  return {
    async release() {
      if (await exists(join(ephemeral, '.busy'))) {
        throw new MoltError(
          ErrorCode.MountBusy,
          `${ephemeral} is busy (held by ${join(ephemeral, '.busy')})`,
          {
            hint: 'stop what holds EPHEMERAL, then retry the upgrade',
          },
        );
      }
      await mkdir(join(root, 'run'), { recursive: true });
      await writeFile(released, '');
    },
    async mount() {
      await mkdir(ephemeral, { recursive: true });
      await rm(released, { force: true });
    },
    async wipe(operationId: string) {
      const marker = join(ephemeral, `.wiped-${operationId}`);
      if (await exists(marker)) return;
      await mkdir(ephemeral, { recursive: true });
      for (const name of await readdir(ephemeral))
        await rm(join(ephemeral, name), { recursive: true, force: true });
      // The marker is written last: a wipe cut short runs again in full.
      await writeFile(marker, '');
      await fsyncDir(ephemeral);
    },
  };
}
