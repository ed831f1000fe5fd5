// SPDX-License-Identifier: Apache-2.0
// A lab machine's config may hold the registry password: it is written 0600 from creation, whether
// molt writes it or installs the one given with --config.
import assert from 'node:assert/strict';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../platform/process/managed-process.ts';
import { initMachine, type MachineInitOptions } from './machine-init.ts';

const base = (root: string): MachineInitOptions => ({
  root,
  bootloader: 'grub',
  controlPlane: false,
  insecureRegistry: true,
  healthDeadlineSeconds: 5,
  apiPort: 7443,
  molt: [],
});

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

describe('a lab machine config', () => {
  it('is written owner-only, and so is one installed from --config', async () => {
    const dir = await tempDir('machine-init');
    try {
      const root = join(dir.path, 'm1');
      await initMachine(base(root));
      assert.equal(await modeOf(join(root, 'state', 'config.yaml')), 0o600);

      const given = join(dir.path, 'given.yaml');
      await writeFile(
        given,
        'node: m2\nrole: worker\nbootloader: grub\nregistry: {host: reg.example, username: u, password: p}\n',
        { mode: 0o644 },
      );
      const root2 = join(dir.path, 'm2');
      await initMachine({ ...base(root2), configFile: given });
      assert.equal(await modeOf(join(root2, 'state', 'config.yaml')), 0o600);
    } finally {
      await dir.remove();
    }
  });
});
