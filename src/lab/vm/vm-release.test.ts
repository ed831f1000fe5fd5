// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  BrokenKubeletDropIn,
  BrokenKubeletFlag,
  buildVmRelease,
  writeBrokenKubeletOverlay,
} from './vm-release.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'molt-vm-release-'));
  dirs.push(dir);
  return dir;
}

/**
 * A stand-in for `molt image build`: records its arguments and writes the artifacts and the
 * image.json of a node-runtime image into `--out`, as the real build does.
 */
const fakeBuild = `
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const args = process.argv.slice(2);
const out = args[args.indexOf('--out') + 1];
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'args.json'), JSON.stringify(args));
for (const name of ['vmlinuz', 'initrd.img', 'rootfs.img']) writeFileSync(join(out, name), name);
writeFileSync(join(out, 'cmdline'), 'root=PARTLABEL=slot-a ro\\n');
writeFileSync(join(out, 'image.json'), JSON.stringify({ kubernetesNode: { kubelet: 'v1.36.3', containerd: 'v2.4.2' } }));
`;

describe('VM releases', () => {
  it('a broken-kubelet overlay: a kubelet.service drop-in that starts the kubelet on a flag it does not know', async () => {
    const overlay = await writeBrokenKubeletOverlay(join(await tempDir(), 'broken-kubelet'));
    const unit = await readFile(join(overlay, BrokenKubeletDropIn), 'utf8');
    assert.equal(
      BrokenKubeletDropIn,
      'usr/lib/systemd/system/kubelet.service.d/50-molt-lab-broken.conf',
    );
    // The unit's own ExecStart is reset first: systemd refuses a second ExecStart= in a simple service.
    assert.match(
      unit,
      /^\[Service\]\nExecStart=\nExecStart=\/usr\/local\/bin\/kubelet --molt-lab-no-such-flag \$KUBELET_ARGS\n/m,
    );
    assert.equal(BrokenKubeletFlag, '--molt-lab-no-such-flag');
  });

  it('builds with the overlays it is given, in order, and reads the node runtime labels back', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'build.mjs'), fakeBuild);
    const out = join(dir, 'images', '1.2.0-broken-kubelet');
    const release = await buildVmRelease({
      molt: [process.execPath, join(dir, 'build.mjs')],
      version: '1.2.0',
      out,
      kubernetesNode: '/cache/node',
      overlays: ['/lab/overlays/broken-kubelet'],
      log: () => undefined,
    });
    assert.deepEqual(JSON.parse(await readFile(join(out, 'args.json'), 'utf8')), [
      ...['image', 'build', '--version', '1.2.0', '--out', out],
      ...['--kubernetes-node', '/cache/node', '--overlay', '/lab/overlays/broken-kubelet'],
    ]);
    assert.equal(release.labels['molt.dev/kubelet-version'], 'v1.36.3');
    assert.equal(
      new TextDecoder().decode(release.artifacts['cmdline']),
      'root=PARTLABEL=slot-a ro',
    );
  });
});
