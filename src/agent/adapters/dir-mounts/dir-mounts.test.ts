// SPDX-License-Identifier: Apache-2.0
// The lab's EPHEMERAL (a directory, a marker for "released", `.busy` for a holder) passes the
// same suite as a real partition.
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { mountsConformance } from '../../../testkit/mounts-conformance.ts';
import { createDirMounts } from './index.ts';

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

mountsConformance('lab directory', async () => {
  const dir = await tempDir('dir-mounts');
  const ephemeral = join(dir.path, 'ephemeral');
  await mkdir(ephemeral);
  return {
    mounts: createDirMounts(dir.path),
    mounted: async () => !(await exists(join(dir.path, 'run', 'ephemeral.released'))),
    hold: async () => {
      await writeFile(join(ephemeral, '.busy'), '');
      return () => rm(join(ephemeral, '.busy'), { force: true });
    },
    put: (name) => writeFile(join(ephemeral, name), 'x'),
    has: (name) => exists(join(ephemeral, name)),
    close: () => dir.remove(),
  };
});
