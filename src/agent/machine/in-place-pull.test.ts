// SPDX-License-Identifier: Apache-2.0
// The order of an upgrade whose pull writes the slot in place (docs/adr/0008 §3), on real files:
// the block-device slot store (partitions = pre-sized files) and both bootloader back-ends. The
// slot is marked `writing` and its boot entry removed BEFORE the first byte reaches the partition,
// and only after what can be checked without the bytes passed (here: the size against the
// partition, the cmdline); the file store keeps its order (pull into `*.next`, then mark writing).
import assert from 'node:assert/strict';
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkStagedImage } from '../../core/boot/staged-image.ts';
import { ErrorCode } from '../../core/errors.ts';
import type { SlotStatus } from '../../core/slots/slot.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { stageOnDisk } from '../../testkit/staged-on-disk.ts';
import { createBlockSlotStore } from '../adapters/block-slot-store/index.ts';
import { createFsSlotStore } from '../adapters/fs-slot-store/index.ts';
import { checkFits } from '../adapters/fs-slot-store/placement.ts';
import { createGrubBootloader } from '../adapters/grub/index.ts';
import { createSdBootBootloader } from '../adapters/sdboot/index.ts';
import { createNoClusterKubeNode } from '../adapters/no-cluster/index.ts';
import type { Bootloader } from '../ports/bootloader.ts';
import { createFakeClock } from '../ports/clock.fake.ts';
import type { ImageSource } from '../ports/image-source.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createFakeMounts } from '../ports/mounts.fake.ts';
import { createFakePower } from '../ports/power.fake.ts';
import { createFakeServices } from '../ports/services.fake.ts';
import { stagedRecordOf, type StageInput } from '../ports/slot-store.fake.ts';
import type { SlotStore } from '../ports/slot-store.ts';
import { createRunner } from './runner.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const partitionBytes = 4096;

function release(version: string, rootfs: Uint8Array, cmdline = 'quiet'): StageInput {
  return {
    imageRef: `reg.test/molt:${version}`,
    imageDigest: `sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`,
    version,
    artifacts: {
      vmlinuz: bytes(`kernel ${version}`),
      'rootfs.img': rootfs,
      cmdline: bytes(cmdline),
    },
  };
}

/** What slot B looked like when the pull wrote its first byte. */
interface Seen {
  readonly status: SlotStatus | undefined;
  readonly entry: boolean;
}

/**
 * An image source that keeps the seam as the OCI one does: descriptor checks (size against the
 * target, the staged checks) first, then `beforeOverwrite`, then the bytes — recording slot B then.
 */
function imageSource(
  root: string,
  m: { slots: SlotStore; bootloader: Bootloader },
  images: Readonly<Record<string, StageInput>>,
  seen: Seen[],
): ImageSource {
  return {
    async pull(image, slot, options = {}) {
      const found = images[image];
      if (found === undefined) throw new Error(`no image ${image}`);
      const staged = { ...found, imageRef: image };
      const targets = options.inPlace?.targets ?? {};
      for (const [name, t] of Object.entries(targets))
        checkFits(name as 'rootfs.img', staged.artifacts['rootfs.img']?.byteLength ?? 0, t);
      checkStagedImage({
        slot,
        record: stagedRecordOf(slot, staged, '2026-11-27T00:00:00.000Z'),
        cmdline: new TextDecoder().decode(staged.artifacts.cmdline),
      });
      await options.inPlace?.beforeOverwrite();
      const entries = (await m.bootloader.read()).entries;
      seen.push({
        status: (await m.slots.manifest(slot))?.status,
        entry: entries.some((e) => e.slot === slot),
      });
      await stageOnDisk(root, slot, staged, targets);
      return { imageRef: image, imageDigest: found.imageDigest, version: found.version };
    },
  };
}

async function partition(dir: string, name: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, '');
  await truncate(path, partitionBytes);
  return path;
}

async function machine(root: string, store: 'block' | 'files', loader: 'grub' | 'systemd-boot') {
  const slots =
    store === 'block'
      ? createBlockSlotStore(root, {
          partitions: { A: await partition(root, 'a.part'), B: await partition(root, 'b.part') },
        })
      : createFsSlotStore(root);
  const bootloader = loader === 'grub' ? createGrubBootloader(root) : createSdBootBootloader(root);
  for (const [slot, version] of [
    ['B', '1.0.0'],
    ['A', '1.1.0'],
  ] as const) {
    const op = `install-${slot}`;
    await stageOnDisk(
      root,
      slot,
      release(version, bytes(`root ${version}`)),
      (await slots.pullTargets?.(slot)) ?? {},
    );
    await slots.install(slot, op);
    await bootloader.writeEntry(slot, await slots.verify(slot, op));
    await slots.markReady(slot, op);
  }
  await bootloader.commit('A');
  const seen: Seen[] = [];
  const images = {
    'reg.test/molt:2.0.0': release('2.0.0', new Uint8Array(partitionBytes).fill(2)),
    'reg.test/molt:2.1.0-big': release('2.1.0', new Uint8Array(partitionBytes + 1).fill(3)),
    'reg.test/molt:2.2.0-bad': release('2.2.0', bytes('root 2.2.0'), 'init=/bin/sh; reboot'),
  };
  const power = createFakePower();
  const afterPull: Seen[] = [];
  const runner = createRunner({
    journal: createMemoryJournalStore(),
    ports: {
      bootloader,
      slots,
      images: imageSource(root, { slots, bootloader }, images, seen),
      services: createFakeServices([]),
      mounts: createFakeMounts(),
      kube: createNoClusterKubeNode(),
      power,
      clock: createFakeClock(),
      health: [],
    },
    boot: { bootId: 'boot-1', slot: 'A' },
    holds: { check: () => undefined },
    faults: {
      async at(phase, when) {
        if (phase !== 'Pulling' || when !== 'after') return;
        const b = await slots.manifest('B');
        const entries = (await bootloader.read()).entries;
        afterPull.push({ status: b?.status, entry: entries.some((e) => e.slot === 'B') });
      },
    },
    controlPlane: false,
    healthDeadlineMs: 30_000,
    newOperationId: () => `op-${Math.random().toString(36).slice(2, 8)}`,
    onFatal: (error) => {
      throw error;
    },
    tickMs: 5,
  });
  await runner.start();
  return { slots, bootloader, power, runner, seen, afterPull };
}
type Machine = Awaited<ReturnType<typeof machine>>;

async function settle(m: Machine): Promise<void> {
  for (let i = 0; i < 2000; i += 1) {
    if (m.power.reboots.length > 0) return;
    if (m.runner.state().phase === 'Idle') return m.runner.settled();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  assert.fail(`the operation is still in ${m.runner.state().phase}`);
}

async function withMachine(
  store: 'block' | 'files',
  loader: 'grub' | 'systemd-boot',
  test: (m: Machine) => Promise<void>,
): Promise<void> {
  const dir = await tempDir('in-place-pull');
  let m: Machine | undefined;
  try {
    m = await machine(dir.path, store, loader);
    await test(m);
  } finally {
    m?.runner.close();
    await dir.remove();
  }
}

const slotB = async (m: Machine): Promise<{ status: SlotStatus | undefined; entry: boolean }> => ({
  status: (await m.slots.manifest('B'))?.status,
  entry: (await m.bootloader.read()).entries.some((e) => e.slot === 'B'),
});

for (const loader of ['grub', 'systemd-boot'] as const) {
  describe(`an upgrade whose pull writes the slot in place (${loader})`, () => {
    it('marks slot B writing and removes its entry before the first byte, then upgrades', () =>
      withMachine('block', loader, async (m) => {
        await m.runner.submit({ kind: 'upgrade', image: 'reg.test/molt:2.0.0' });
        await settle(m);
        assert.deepEqual(m.seen, [{ status: 'writing', entry: false }]);
        assert.deepEqual(m.afterPull, [{ status: 'writing', entry: false }]);
        const b = await m.slots.manifest('B');
        assert.equal(b?.status, 'ready');
        assert.equal(b.version, '2.0.0');
        assert.equal(b.artifacts['rootfs.img']?.size, partitionBytes);
        await m.bootloader.checkEntry('B', b);
        assert.equal((await m.bootloader.read()).oneShot, 'B');
      }));

    for (const [image, code] of [
      ['reg.test/molt:2.1.0-big', ErrorCode.ImageTooLarge],
      ['reg.test/molt:2.2.0-bad', ErrorCode.ImageInvalid],
    ] as const)
      it(`refuses ${image} before touching slot B: still ready, with its entry`, () =>
        withMachine('block', loader, async (m) => {
          const before = await m.slots.verify('B');
          await m.runner.submit({ kind: 'upgrade', image });
          await settle(m);
          assert.equal(m.runner.state().last?.code, code);
          assert.deepEqual(m.seen, [], 'no byte was written');
          assert.deepEqual(await slotB(m), { status: 'ready', entry: true });
          assert.deepEqual(await m.slots.verify('B'), before, 'the previous release is intact');
        }));

    it('keeps the file store order: slot B is ready with its entry until WritingSlot', () =>
      withMachine('files', loader, async (m) => {
        await m.runner.submit({ kind: 'upgrade', image: 'reg.test/molt:2.0.0' });
        await settle(m);
        assert.deepEqual(m.seen, [{ status: 'ready', entry: true }]);
        assert.deepEqual(m.afterPull, [{ status: 'ready', entry: true }]);
        assert.equal((await m.slots.manifest('B'))?.version, '2.0.0');
      }));
  });
}
