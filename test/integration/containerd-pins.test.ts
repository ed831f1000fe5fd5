// SPDX-License-Identifier: Apache-2.0
// Pinned images on a real containerd (the node runtime's own, v2 — scripts/ensure-node-bins.sh)
// through `ctr`, as a node's agent pins them: the ImagePins conformance suite, each case in a
// namespace of its own; the images are the lab's busybox images in a real registry, named by a
// host that only a `certs.d/<host>/hosts.toml` mirror entry resolves (as a VM's names its host's
// registry), so a pull that ignored the node's hosts files would fail. Then the agent's whole
// path in `k8s.io`, read back through containerd's CRI with crictl — what the kubelet's image
// garbage collection reads: an image the kubelet pulled by tag is pinned by its digest name, and
// unpinned when the list drops it, the image kept. containerd needs root.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createContainerdPins } from '../../src/agent/adapters/containerd-pins/index.ts';
import { createFsPinnedRecord } from '../../src/agent/adapters/fs-pinned-record/index.ts';
import { createPinnedImages } from '../../src/agent/machine/pinned-images.ts';
import { pushContainerImages } from '../../src/lab/services/container-images.ts';
import { nodeBinaries } from '../../src/platform/kube/binaries.ts';
import { scratchDir } from '../../src/testkit/scratch-dir.ts';
import { startContainerd, type RunningContainerd } from '../../src/testkit/containerd-process.ts';
import { imagePinsConformance, type PinImages } from '../../src/testkit/image-pins-conformance.ts';
import { startRegistry, type TestRegistry } from '../../src/testkit/registry-process.ts';

const run = promisify(execFile);
/** The name images carry; only the hosts file maps it to the registry. */
const mirrored = 'registry.molt.test:5000';

let registry: TestRegistry;
let containerd: RunningContainerd;
let hostsDir: string;
let images: PinImages;
let namespaces = 0;

before(async () => {
  const bin = join(await nodeBinaries(), 'bin');
  registry = await startRegistry();
  const pushed = await pushContainerImages({ registry: registry.host, insecure: true });
  const named = (byDigest: string): string => byDigest.replace(registry.host, mirrored);
  images = {
    a: named(pushed.busybox.byDigest),
    b: named(pushed.busyboxNext.byDigest),
    missing: `${mirrored}/molt/busybox@sha256:${'0'.repeat(64)}`,
  };
  hostsDir = await scratchDir('certs.d');
  await mkdir(join(hostsDir, mirrored));
  await writeFile(
    join(hostsDir, mirrored, 'hosts.toml'),
    `server = "http://${registry.host}"\ncapabilities = ["pull", "resolve"]\n`,
  );
  containerd = await startContainerd(bin, { hostsDir });
});

after(async () => {
  // Either may be missing when `before` failed halfway.
  await (containerd as RunningContainerd | undefined)?.stop();
  await (registry as TestRegistry | undefined)?.stop();
});

const pinsIn = (namespace: string) =>
  createContainerdPins({ ctr: containerd.ctr, address: containerd.address, namespace, hostsDir });

imagePinsConformance('containerd v2 through ctr', () => {
  namespaces += 1;
  return Promise.resolve({ pins: pinsIn(`conformance-${String(namespaces)}`), images });
});

describe('pinned images on containerd, as its CRI reports them', () => {
  /** What `crictl images` says of the image: its repo tags and whether it is pinned. */
  const criImage = async (digest: string) => {
    const { stdout } = await run(containerd.crictl, [
      ...['--runtime-endpoint', `unix://${containerd.address}`],
      ...['--image-endpoint', `unix://${containerd.address}`],
      ...['images', '--pinned', '-o', 'json'],
    ]);
    const listed = (
      JSON.parse(stdout) as {
        images: { repoTags: string[]; repoDigests: string[]; pinned: boolean }[];
      }
    ).images;
    return listed.find((i) => i.repoDigests.some((r) => r.endsWith(`@${digest}`)));
  };
  const digestOf = (ref: string): string => ref.slice(ref.indexOf('@') + 1);
  /** `crictl rmi --prune`: every image no container uses goes, unless it is pinned. */
  const prune = () =>
    run(containerd.crictl, [
      ...['--runtime-endpoint', `unix://${containerd.address}`],
      ...['--image-endpoint', `unix://${containerd.address}`],
      ...['rmi', '--prune'],
    ]);

  it('pins an image the kubelet pulled by tag so a prune keeps it, and unpins it once dropped', async () => {
    // As the kubelet pulls: through the CRI, by tag, via the hosts file.
    await run(containerd.crictl, [
      ...['--runtime-endpoint', `unix://${containerd.address}`],
      ...['--image-endpoint', `unix://${containerd.address}`],
      ...['pull', `${mirrored}/molt/busybox:1`],
    ]);
    assert.equal((await criImage(digestOf(images.a)))?.pinned, false);
    const pinned = createPinnedImages({
      pins: pinsIn('k8s.io'),
      record: createFsPinnedRecord(await scratchDir('pinned')),
    });
    assert.deepEqual(await pinned.set([images.a, images.b]), {
      pinned: [images.a, images.b],
      unpinned: [],
    });
    const a = await criImage(digestOf(images.a));
    assert.deepEqual(a?.repoTags, [`${mirrored}/molt/busybox:1`]);
    assert.equal(a.pinned, true);
    assert.equal((await criImage(digestOf(images.b)))?.pinned, true);
    // What an administrator's clean-up does to a node: pinned images survive it.
    await prune();
    assert.equal((await criImage(digestOf(images.a)))?.pinned, true, 'a pinned image survives');
    assert.equal((await criImage(digestOf(images.b)))?.pinned, true);
    assert.deepEqual(await pinned.set([images.b]), { pinned: [images.b], unpinned: [images.a] });
    assert.equal((await criImage(digestOf(images.a)))?.pinned, false);
    assert.equal((await criImage(digestOf(images.b)))?.pinned, true);
    assert.deepEqual(await pinsIn('k8s.io').pinned(), [images.b]);
    await prune();
    assert.equal(await criImage(digestOf(images.a)), undefined, 'unpinned, it is pruned');
    assert.equal((await criImage(digestOf(images.b)))?.pinned, true);
  });
});
