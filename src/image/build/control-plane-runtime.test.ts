// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { lstat, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import {
  ComponentBins,
  ControlPlaneBinDir,
  installControlPlane,
  readControlPlaneRuntime,
  ToolBins,
} from './control-plane-runtime.ts';
import { baseRecipe } from './recipe.ts';
import { parseBuildOptions } from './options.ts';

/** A directory laid out like scripts/ensure-kube-bins.sh's, each binary a script saying its version. */
async function kubeDir(
  root: string,
  name: string,
  apiserver = 'Kubernetes v1.35.4',
): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  const says: Record<string, string> = {
    'kube-apiserver': apiserver,
    etcd: 'etcd Version: 3.5.35\nGit SHA: x',
  };
  for (const b of [...ComponentBins, ...ToolBins])
    await writeFile(join(dir, b), `#!/bin/sh\necho '${says[b] ?? b}'\n`, { mode: 0o755 });
  return dir;
}

const refused = (pattern: RegExp) => (e: unknown) =>
  isMoltError(e) &&
  e.code === ErrorCode.BadFlag &&
  pattern.test(e.message) &&
  /bash scripts\/ensure-kube-bins\.sh/.test(e.hint ?? '');

describe('--kubernetes-control-plane DIR', () => {
  let root: { path: string; remove: () => Promise<void> };
  before(async () => {
    root = await tempDir('control-plane-runtime');
  });
  after(() => root.remove());

  it('reads the versions the binaries print; its digest follows every binary', async () => {
    const dir = await kubeDir(root.path, 'ok');
    const r = await readControlPlaneRuntime(dir);
    assert.deepEqual(r.versions, { kubernetes: 'v1.35.4', etcd: 'v3.5.35' });
    await writeFile(join(dir, 'kube-scheduler'), '#!/bin/sh\necho other\n', { mode: 0o755 });
    assert.notEqual((await readControlPlaneRuntime(dir)).digest, r.digest);
  });

  it('refuses a directory without one of its binaries, or one that does not say its version', async () => {
    await assert.rejects(
      readControlPlaneRuntime(join(root.path, 'nowhere')),
      refused(/is not a directory/),
    );
    const partial = await kubeDir(root.path, 'partial');
    await rm(join(partial, 'etcdutl'));
    await assert.rejects(readControlPlaneRuntime(partial), refused(/has no etcdutl/));
    const mute = await kubeDir(root.path, 'mute', 'hello');
    await assert.rejects(
      readControlPlaneRuntime(mute),
      refused(/kube-apiserver --version printed no version/),
    );
  });

  it('lays the binaries where a control-plane config finds them, and leaves etcd to the agent', async () => {
    const rt = await readControlPlaneRuntime(await kubeDir(root.path, 'install'));
    const tree = join(root.path, 'tree');
    const wants = join(tree, 'etc', 'systemd', 'system', 'multi-user.target.wants');
    await mkdir(wants, { recursive: true });
    await symlink('/usr/lib/systemd/system/etcd.service', join(wants, 'etcd.service'));
    await installControlPlane(tree, rt);
    for (const b of ComponentBins)
      assert.equal((await stat(join(tree, ControlPlaneBinDir, b))).mode & 0o777, 0o755, b);
    for (const b of ToolBins)
      assert.equal((await stat(join(tree, 'usr', 'local', 'bin', b))).mode & 0o777, 0o755, b);
    const dropIn = await readFile(
      join(tree, 'etc', 'systemd', 'system', 'etcd.service.d', 'molt.conf'),
      'utf8',
    );
    assert.match(dropIn, /^ExecStart=\n^ExecStart=\/usr\/local\/bin\/etcd$/m);
    assert.match(dropIn, /^EnvironmentFile=\/molt\/state\/etcd\.env$/m);
    assert.match(dropIn, /^RequiresMountsFor=\/molt\/ephemeral\/etcd$/m);
    await assert.rejects(lstat(join(wants, 'etcd.service')), /ENOENT/);
  });

  it('puts etcd-server in the base only for an image with a control plane', () => {
    const packages = (argv: string[]) =>
      baseRecipe(
        parseBuildOptions(['--version', '1.0.0', '--out', 'o', ...argv], {}) ?? assert.fail(),
        'files',
      ).packages;
    assert.ok(packages(['--kubernetes-control-plane', '/k']).includes('etcd-server'));
    assert.ok(!packages([]).includes('etcd-server'));
  });
});
