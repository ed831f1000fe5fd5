// SPDX-License-Identifier: Apache-2.0
// The runner on real files (the file-system slot store and both bootloader back-ends on a temp
// dir): an image refused for its cmdline used to be refused only when its
// boot entry was written, after WriteSlot had overwritten the previous release, leaving slot.json
// `ready` with no entry; and a rollback to such a slot drained the node before failing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import type { SlotId, SlotManifest } from '../../core/slots/slot.ts';
import { createFsSlotStore } from '../adapters/fs-slot-store/index.ts';
import { createGrubBootloader } from '../adapters/grub/index.ts';
import { createSdBootBootloader } from '../adapters/sdboot/index.ts';
import type { Bootloader } from '../ports/bootloader.ts';
import { createFakeClock } from '../ports/clock.fake.ts';
import type { ImageSource } from '../ports/image-source.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createRecordingKubeNode } from '../ports/kube-node.fake.ts';
import { createFakeMounts } from '../ports/mounts.fake.ts';
import { createFakePower } from '../ports/power.fake.ts';
import { createFakeServices } from '../ports/services.fake.ts';
import type { SlotStore, StagedImage } from '../ports/slot-store.ts';
import type { StageInput } from '../ports/slot-store.fake.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { stageOnDisk } from '../../testkit/staged-on-disk.ts';
import type { FaultPoints } from './ports.ts';
import { createRunner, type Runner } from './runner.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function release(version: string, cmdline?: string): StageInput {
  return {
    imageRef: `reg.test/molt:${version}`,
    imageDigest: `sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`,
    version,
    artifacts: {
      vmlinuz: bytes(`kernel ${version}`),
      'initrd.img': bytes(`initrd ${version}`),
      'rootfs.img': bytes(`rootfs ${version}`),
      ...(cmdline === undefined ? {} : { cmdline: bytes(cmdline) }),
    },
  };
}

/** Write `image` into `slot` the way an upgrade does, skipping the staged checks (an older molt). */
async function writeSlot(
  m: { root: string; slots: SlotStore; bootloader: Bootloader },
  slot: SlotId,
  image: StageInput,
  entry = true,
): Promise<SlotManifest> {
  const { root } = m;
  const op = `install-${slot}`;
  await stageOnDisk(root, slot, image);
  await m.slots.markWriting(slot, op);
  await m.slots.install(slot, op);
  if (entry) await m.bootloader.writeEntry(slot, await m.slots.verify(slot, op));
  return m.slots.markReady(slot, op);
}

const images: Readonly<Record<string, StageInput>> = {
  'reg.test/molt:2.0.0-bad': release('2.0.0', 'init=/bin/sh; reboot'),
  'reg.test/molt:2.0.0': release('2.0.0', 'quiet loglevel=3'),
};

/** A machine booted in A (1.1.0, committed) whose slot B holds the previous release 1.0.0. */
async function machine(root: string, loader: 'grub' | 'systemd-boot', faults?: FaultPoints) {
  const slots = createFsSlotStore(root);
  const bootloader = loader === 'grub' ? createGrubBootloader(root) : createSdBootBootloader(root);
  const previous = await writeSlot({ root, slots, bootloader }, 'B', release('1.0.0', 'quiet'));
  await writeSlot({ root, slots, bootloader }, 'A', release('1.1.0'));
  await bootloader.commit('A');
  const source: ImageSource = {
    async pull(image, slot): Promise<StagedImage> {
      const found = images[image];
      if (found === undefined) throw new Error(`no image ${image}`);
      await stageOnDisk(root, slot, { ...found, imageRef: image });
      return { imageRef: image, imageDigest: found.imageDigest, version: found.version };
    },
  };
  const kube = createRecordingKubeNode();
  const power = createFakePower();
  const runner: Runner = createRunner({
    journal: createMemoryJournalStore(),
    ports: {
      bootloader,
      slots,
      images: source,
      services: createFakeServices([]),
      mounts: createFakeMounts(),
      kube,
      power,
      clock: createFakeClock(),
      health: [],
    },
    boot: { bootId: 'boot-1', slot: 'A' },
    faults: faults ?? { at: () => Promise.resolve() },
    holds: { check: () => undefined },
    controlPlane: false,
    healthDeadlineMs: 30_000,
    newOperationId: () => `op-${Math.random().toString(36).slice(2, 8)}`,
    onFatal: (error) => {
      throw error;
    },
    tickMs: 5,
  });
  await runner.start();
  return { slots, bootloader, kube, power, runner, previous };
}
type Machine = Awaited<ReturnType<typeof machine>>;

async function untilReboot(m: Machine): Promise<void> {
  for (let i = 0; i < 2000 && m.power.reboots.length === 0; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 2));
  assert.ok(m.power.reboots.length > 0, 'the machine never asked for a reboot');
}

/** Until the operation ended (Idle) or asked for a reboot: a wrong machine fails, not hangs. */
async function untilIdleOrReboot(m: Machine): Promise<void> {
  for (let i = 0; i < 2000; i += 1) {
    if (m.power.reboots.length > 0) return;
    if (m.runner.state().phase === 'Idle') return m.runner.settled();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  assert.fail(`the operation is still in ${m.runner.state().phase}`);
}

/** Run `test` on a fresh machine; the runner is closed and the root removed whatever happens. */
async function withMachine(
  loader: 'grub' | 'systemd-boot',
  test: (m: Machine, root: string) => Promise<void>,
  faults?: (m: () => Machine | undefined) => FaultPoints,
): Promise<void> {
  const dir = await tempDir('staged-checks');
  let m: Machine | undefined;
  try {
    m = await machine(
      dir.path,
      loader,
      faults?.(() => m),
    );
    await test(m, dir.path);
  } finally {
    m?.runner.close();
    await dir.remove();
  }
}

for (const loader of ['grub', 'systemd-boot'] as const) {
  describe(`staged checks on real files (${loader})`, () => {
    it('refuses an image whose cmdline no bootloader may get while staged: nothing disrupted, slot B keeps the previous release, ready, with its entry', () =>
      withMachine(loader, async (m) => {
        const boot = await m.bootloader.read();
        await m.runner.submit({ kind: 'upgrade', image: 'reg.test/molt:2.0.0-bad' });
        await untilIdleOrReboot(m);
        const last = m.runner.state().last;
        assert.equal(last?.result, 'Failed');
        assert.equal(last.code, ErrorCode.ImageInvalid);
        assert.match(last.reason ?? '', /cmdline/);
        assert.deepEqual(m.kube.calls, [], 'nothing was cordoned or drained');
        assert.deepEqual(await m.slots.manifest('B'), m.previous, 'slot.json of B is unchanged');
        assert.deepEqual(await m.bootloader.read(), boot, 'the boot entries are unchanged');
        await m.bootloader.checkEntry('B', m.previous);
        assert.deepEqual(await m.slots.verify('B'), m.previous);

        await m.runner.submit({ kind: 'rollback' });
        await untilReboot(m);
        assert.equal(
          (await m.bootloader.read()).oneShot,
          'B',
          'the previous release is still a rollback target',
        );
      }));

    it('upgrades with a valid cmdline: slot B ready only with its entry, which carries the cmdline', () =>
      withMachine(loader, async (m) => {
        await m.runner.submit({ kind: 'upgrade', image: 'reg.test/molt:2.0.0' });
        await untilReboot(m);
        const b = await m.slots.manifest('B');
        assert.equal(b?.status, 'ready');
        assert.equal(b.version, '2.0.0');
        await m.bootloader.checkEntry('B', b);
        assert.equal((await m.bootloader.read()).oneShot, 'B');
      }));

    it('refuses a rollback to a ready slot without its boot entry (what the defect left) before anything is disrupted', () =>
      withMachine(loader, async (m, root) => {
        // As an older molt left it: the refused image written, `ready`, its entry never written.
        await m.bootloader.removeEntry('B');
        await writeSlot({ ...m, root }, 'B', release('2.0.0', 'init=/bin/sh; reboot'), false);
        await assert.rejects(
          m.runner.submit({ kind: 'rollback' }),
          (e: unknown) => isMoltError(e, ErrorCode.NoValidSlot) && /boot entry/.test(e.message),
        );
        assert.deepEqual(m.kube.calls, []);
        assert.equal(m.runner.state().phase, 'Idle');
      }));

    for (const damage of ['missing', 'other kernel'] as const)
      it(`fails a rollback whose target entry is ${damage} in CheckingRollbackTarget, before the drain`, () =>
        withMachine(
          loader,
          async (m) => {
            await m.runner.submit({ kind: 'rollback' });
            await untilIdleOrReboot(m);
            const last = m.runner.state().last;
            assert.equal(last?.result, 'Failed');
            assert.equal(last.code, ErrorCode.BootloaderInvalid);
            assert.deepEqual(m.kube.calls, [], 'nothing was cordoned or drained');
            assert.deepEqual(m.power.reboots, []);
          },
          (machine) => ({
            // After the request was admitted, before its first step: the entry changes under it.
            async at(phase, when) {
              const m = machine();
              if (m === undefined || phase !== 'CheckingRollbackTarget' || when !== 'before')
                return;
              if (damage === 'missing') return m.bootloader.removeEntry('B');
              const vmlinuz = m.previous.artifacts.vmlinuz;
              assert.ok(vmlinuz !== undefined);
              const artifacts = {
                ...m.previous.artifacts,
                vmlinuz: { ...vmlinuz, path: 'esp/molt/a/vmlinuz' },
              };
              await m.bootloader.writeEntry('B', { ...m.previous, artifacts });
            },
          }),
        ));
  });
}
