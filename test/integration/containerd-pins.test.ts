// SPDX-License-Identifier: Apache-2.0
// Pinned images on a real containerd (the node runtime's own, v2 — scripts/ensure-node-bins.sh)
// through `ctr`, as a node's agent pins them: the ImagePins conformance suite, each case in a
// namespace of its own; the images are the lab's busybox images in a real registry, named by a
// host that only a `certs.d/<host>/hosts.toml` mirror entry resolves (as a VM's names its host's
// registry), so a pull that ignored the node's hosts files would fail. Then the agent's whole
// path: the list set twice, the label really gone from the dropped image and the image kept.
// containerd needs root.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createContainerdPins } from '../../src/agent/adapters/containerd-pins/index.ts';
import { createFsPinnedRecord } from '../../src/agent/adapters/fs-pinned-record/index.ts';
import { createPinnedImages } from '../../src/agent/machine/pinned-images.ts';
import { PinnedLabel } from '../../src/agent/ports/image-pins.ts';
import { pushContainerImages } from '../../src/lab/services/container-images.ts';
import { nodeBinaries } from '../../src/platform/kube/binaries.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
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
  hostsDir = (await tempDir('certs.d')).path;
  await mkdir(join(hostsDir, mirrored));
  await writeFile(
    join(hostsDir, mirrored, 'hosts.toml'),
    `server = "http://${registry.host}"\ncapabilities = ["pull", "resolve"]\n`,
  );
  containerd = await startContainerd(bin);
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

describe('pinned images on containerd', () => {
  it('keeps the listed images labelled, and drops the label (not the image) of the one left out', async () => {
    const pins = pinsIn('k8s.io');
    const pinned = createPinnedImages({
      pins,
      record: createFsPinnedRecord((await tempDir('pinned')).path),
    });
    assert.deepEqual(await pinned.set([images.a, images.b]), {
      pinned: [images.a, images.b],
      unpinned: [],
    });
    assert.deepEqual(await pinned.set([images.b]), { pinned: [images.b], unpinned: [images.a] });
    // What the CRI reads: the image's own labels in containerd, listed by ctr itself.
    const { stdout } = await run(containerd.ctr, [
      '--address',
      containerd.address,
      '--namespace',
      'k8s.io',
      'images',
      'ls',
    ]);
    const line = (name: string): string =>
      stdout.split('\n').find((l) => l.startsWith(`${name} `)) ?? '';
    assert.match(line(images.b), new RegExp(`${PinnedLabel.key}=${PinnedLabel.value}`));
    assert.notEqual(line(images.a), '');
    assert.doesNotMatch(line(images.a), new RegExp(PinnedLabel.key));
  });
});
