// SPDX-License-Identifier: Apache-2.0
// `molt dev publish --dir DIR`: what the build output directory contributes — artifacts, version,
// and the labels image.json implies: the node runtime's (the agent's kubelet skew check reads
// them) and the root filesystem's verity hash tree's.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isMoltError } from '../../../core/errors.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { withDirArtifacts } from './artifacts.ts';

describe('molt dev publish --dir: image.json', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    dir = await tempDir('dir-artifacts');
    for (const name of ['vmlinuz', 'rootfs.img']) await writeFile(join(dir.path, name), name);
  });
  after(() => dir.remove());

  const flags = (label: string[] = []) => ({
    dir: dir.path,
    artifact: [] as string[],
    label,
    version: undefined as string | undefined,
  });
  const imageJson = (json: unknown) =>
    writeFile(join(dir.path, 'image.json'), JSON.stringify(json));

  it('labels a release built with a node runtime with its kubelet and containerd', async () => {
    await imageJson({
      version: '1.4.0',
      kubernetesNode: {
        kubelet: 'v1.35.4',
        containerd: 'v2.4.2',
        cniPlugins: 'v1.10.0',
        crictl: 'v1.37.0',
      },
    });
    const o = await withDirArtifacts(flags(['team=os']));
    assert.equal(o.version, '1.4.0');
    assert.deepEqual(o.label, [
      'molt.dev/kubelet-version=v1.35.4',
      'molt.dev/containerd-version=v2.4.2',
      'team=os',
    ]);
    assert.deepEqual(o.artifact, [
      `vmlinuz=${join(dir.path, 'vmlinuz')}`,
      `rootfs.img=${join(dir.path, 'rootfs.img')}`,
    ]);
  });

  it('adds no label for an image without a node runtime', async () => {
    await imageJson({ version: '1.4.0', cached: false });
    assert.deepEqual((await withDirArtifacts(flags(['team=os']))).label, ['team=os']);
  });

  it('refuses a node runtime without a kubelet version, so no release skips the skew check', async () => {
    for (const kubernetesNode of [
      { containerd: 'v2.4.2' },
      { kubelet: 'latest', containerd: 'x' },
    ]) {
      await imageJson({ version: '1.4.0', kubernetesNode });
      await assert.rejects(
        withDirArtifacts(flags()),
        (e: unknown) =>
          isMoltError(e, 'MOLT_BAD_FLAG') &&
          /image\.json: kubernetesNode does not name its kubelet/.test(e.message),
      );
    }
  });

  it('labels a release with its root filesystem’s verity root hash and offset', async () => {
    const rootHash = 'ab'.repeat(32);
    await imageJson({ version: '1.4.0', verity: { rootHash, hashOffset: 8_192 } });
    assert.deepEqual((await withDirArtifacts(flags())).label, [
      `dev.molt.verity.roothash=${rootHash}`,
      'dev.molt.verity.offset=8192',
    ]);
  });

  it('refuses a verity record that could not open the slot', async () => {
    for (const verity of [
      { rootHash: 'zz', hashOffset: 8_192 },
      { rootHash: 'ab'.repeat(32), hashOffset: 100 },
    ]) {
      await imageJson({ version: '1.4.0', verity });
      await assert.rejects(
        withDirArtifacts(flags()),
        (e: unknown) =>
          isMoltError(e, 'MOLT_BAD_FLAG') && /image\.json: verity does not name/.test(e.message),
      );
    }
  });
});
