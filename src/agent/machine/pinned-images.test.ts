// SPDX-License-Identifier: Apache-2.0
// The images a node keeps pinned: the whole list each time, what molt pinned before and no longer
// wanted unpinned, someone else's pin left alone, nothing unpinned while a pull fails, the record
// on STATE across agent restarts, and a record molt did not write refused by name.
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { scratchDir } from '../../testkit/scratch-dir.ts';
import { imagePinsConformance } from '../../testkit/image-pins-conformance.ts';
import { createFsPinnedRecord, pinnedRecordPath } from '../adapters/fs-pinned-record/index.ts';
import { createFakeImagePins } from '../ports/image-pins.fake.ts';
import { createPinnedImages } from './pinned-images.ts';

const ref = (repo: string, hex: string): string => `reg:5000/molt/${repo}@sha256:${hex.repeat(64)}`;
const gm1 = ref('dns', 'a');
const gm2 = ref('cni', 'b');
const previous = ref('web', 'c');
const sandbox = ref('pause', 'd');

imagePinsConformance('fake', () =>
  Promise.resolve({
    pins: createFakeImagePins([gm1, gm2]),
    images: { a: gm1, b: gm2, missing: ref('gone', 'e') },
  }),
);

async function setup() {
  const root = await scratchDir('pinned');
  const pins = createFakeImagePins([gm1, gm2, previous, sandbox]);
  const file = pinnedRecordPath(root);
  const record = createFsPinnedRecord(root);
  return { pins, root, file, pinned: createPinnedImages({ pins, record }) };
}

describe('pinned images', () => {
  it('pins the list, then unpins only what a later list drops; the images stay', async () => {
    const { pins, pinned } = await setup();
    assert.deepEqual(await pinned.set([gm1, previous]), { pinned: [gm1, previous], unpinned: [] });
    assert.deepEqual((await pins.pinned()).sort(), [gm1, previous].sort());
    assert.deepEqual(await pinned.set([gm1, gm2]), { pinned: [gm1, gm2], unpinned: [previous] });
    assert.deepEqual((await pins.pinned()).sort(), [gm1, gm2].sort());
    assert.equal(await pins.present(previous), true);
    assert.deepEqual(await pinned.current(), { pinned: [gm1, gm2] });
  });

  it('is idempotent: the same list again pulls nothing and unpins nothing', async () => {
    const { pins, pinned } = await setup();
    await pinned.set([gm1, gm2]);
    assert.deepEqual(await pinned.set([gm1, gm2]), { pinned: [gm1, gm2], unpinned: [] });
    assert.deepEqual(pins.pulls, [gm1, gm2]);
  });

  it('never unpins an image someone else pinned, even one the list named for a while', async () => {
    const { pins, pinned } = await setup();
    await pins.pin(sandbox); // containerd pins its sandbox image itself
    await pinned.set([gm1, sandbox]);
    assert.deepEqual(await pinned.set([gm1]), { pinned: [gm1], unpinned: [] });
    assert.deepEqual((await pins.pinned()).sort(), [gm1, sandbox].sort());
  });

  it('unpins nothing while a pull fails, and says which image failed', async () => {
    const { pins, pinned } = await setup();
    await pinned.set([previous]);
    const gone = ref('gone', 'e');
    await assert.rejects(pinned.set([gm1, gone]), (error: unknown) => {
      assert.ok(isMoltError(error, ErrorCode.ImagePinFailed));
      assert.match(error.message, /1 of 2 images not pinned \(nothing was unpinned\)/);
      assert.ok(error.message.includes(gone));
      return true;
    });
    assert.deepEqual((await pins.pinned()).sort(), [gm1, previous].sort());
    // Once the registry serves it, the next call completes and drops the old pin.
    pins.pullable.add(gone);
    assert.deepEqual(await pinned.set([gm1, gone]), { pinned: [gm1, gone], unpinned: [previous] });
  });

  it('remembers its pins across agent restarts (the record on STATE)', async () => {
    const { pins, root, file } = await setup();
    await createPinnedImages({ pins, record: createFsPinnedRecord(root) }).set([gm1, previous]);
    const restarted = createPinnedImages({ pins, record: createFsPinnedRecord(root) });
    assert.deepEqual(await restarted.current(), { pinned: [gm1, previous] });
    assert.deepEqual(await restarted.set([gm1]), { pinned: [gm1], unpinned: [previous] });
    assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { wanted: [gm1], ours: [gm1] });
  });

  it('takes one list at a time: a second call waits for the first', async () => {
    const { pins, pinned } = await setup();
    const order: string[] = [];
    const pin = pins.pin.bind(pins);
    pins.pin = async (name) => {
      order.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 5));
      await pin(name);
      order.push(`end ${name}`);
    };
    await Promise.all([pinned.set([gm1]), pinned.set([gm2])]);
    assert.deepEqual(order, [`start ${gm1}`, `end ${gm1}`, `start ${gm2}`, `end ${gm2}`]);
    assert.deepEqual(await pins.pinned(), [gm2]);
  });

  it('refuses a record it did not write, naming the file', async () => {
    const { file, pinned } = await setup();
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, '{"wanted": 3}');
    await assert.rejects(pinned.set([gm1]), (error: unknown) => {
      assert.ok(isMoltError(error, ErrorCode.MachineInvalid));
      assert.ok(error.message.includes(file));
      return true;
    });
  });
});
