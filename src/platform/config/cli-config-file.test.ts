// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../process/managed-process.ts';
import { cliConfigPath, readCliConfig, updateCliConfig } from './cli-config-file.ts';

describe('the CLI config file', () => {
  let dir: { path: string; remove: () => Promise<void> };
  before(async () => {
    dir = await tempDir('cli-config');
  });
  after(() => dir.remove());

  it('is found at MOLT_CONFIG, else under XDG_CONFIG_HOME, else under HOME, else nowhere', () => {
    const env = { MOLT_CONFIG: '/m.yaml', XDG_CONFIG_HOME: '/x', HOME: '/h' };
    assert.equal(cliConfigPath(env), '/m.yaml');
    assert.equal(cliConfigPath({ ...env, MOLT_CONFIG: '' }), '/x/molt/config.yaml');
    assert.equal(
      cliConfigPath({ HOME: '/h', XDG_CONFIG_HOME: 'relative' }),
      '/h/.config/molt/config.yaml',
    );
    assert.equal(cliConfigPath({}), undefined, 'an empty environment never reads the real home');
  });

  it('reads a missing file as empty, and writes 0600 through a rename, leaving no temp file', async () => {
    const env = { XDG_CONFIG_HOME: dir.path };
    const path = join(dir.path, 'molt', 'config.yaml');
    assert.deepEqual(await readCliConfig(path), { contexts: {} });
    await updateCliConfig(env, (c) => ({ ...c, currentContext: 'a' }));
    await updateCliConfig(env, (c) => ({ ...c, currentContext: 'b' }));
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.equal((await stat(join(dir.path, 'molt'))).mode & 0o777, 0o700);
    assert.deepEqual(await readdir(join(dir.path, 'molt')), ['config.yaml']);
    assert.equal((await readCliConfig(path)).currentContext, 'b');
  });

  it('refuses to write where the environment names no home', async () => {
    await assert.rejects(
      updateCliConfig({}, (c) => c),
      /MOLT_CLI_CONFIG_INVALID|no place for the CLI config file/,
    );
  });
});
