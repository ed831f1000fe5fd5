// SPDX-License-Identifier: Apache-2.0
/**
 * The {@link SlotStore} contract, run against the in-memory fake (both modes), the file-system
 * adapter and the block-device adapter (STYLE §6): what `staged`, `checkStaged`, `install`,
 * `verify`, `markReady`, `markWriting`, `markBad` and `pullTargets` promise the runner. Stores that
 * keep the rootfs in place (a partition) are overwritten by a pull, and refuse what does not fit.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../core/errors.ts';
import type { ArtifactName, SlotId } from '../core/slots/slot.ts';
import type { SlotStore } from '../agent/ports/slot-store.ts';
import type { StageInput } from '../agent/ports/slot-store.fake.ts';

export interface SlotStoreHarness {
  readonly store: SlotStore;
  /** Play a completed pull into the slot's staging area. */
  stage(slot: SlotId, image: StageInput): Promise<void>;
  /** Flip a byte of an installed artifact (in place: of the partition). */
  corrupt(slot: SlotId, name: ArtifactName): Promise<void>;
  close(): Promise<void>;
  /** Stores that keep `rootfs.img` in place: the size of each slot's partition, in bytes. */
  readonly partitionBytes?: number;
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A small image whose artifacts differ per `version`. */
export function sampleImage(version: string, extra: Partial<StageInput> = {}): StageInput {
  return {
    imageRef: `registry.test/acme/installer:${version}`,
    imageDigest: `sha256:${version.replace(/\D/g, '').padEnd(64, '0').slice(0, 64)}`,
    version,
    artifacts: {
      vmlinuz: bytes(`kernel ${version}`),
      'initrd.img': bytes(`initrd ${version}`),
      'rootfs.img': bytes(`rootfs ${version}`),
    },
    ...extra,
  };
}

const rejectsWith = (p: Promise<unknown>, code: string, message?: string): Promise<void> =>
  assert.rejects(p, (e: unknown) => isMoltError(e) && e.code === code, message);

export function slotStoreConformance(name: string, factory: () => Promise<SlotStoreHarness>): void {
  describe(`SlotStore conformance: ${name}`, () => {
    let h: SlotStoreHarness;
    beforeEach(async () => {
      h = await factory();
    });
    afterEach(async () => {
      await h.close();
    });

    it('starts with no manifests and nothing staged', async () => {
      assert.equal(await h.store.manifest('A'), undefined);
      assert.equal(await h.store.staged('B'), undefined);
    });

    it('installs a staged image as a writing slot, ready only once marked so, and clears the staging area', async () => {
      await h.stage('B', sampleImage('1.2.0', { lab: { boot: 'fail', health: 'ok' } }));
      assert.deepEqual(await h.store.staged('B'), {
        imageRef: 'registry.test/acme/installer:1.2.0',
        imageDigest: sampleImage('1.2.0').imageDigest,
        version: '1.2.0',
      });
      const m = await h.store.install('B', 'op-1');
      assert.equal(m.status, 'writing', 'not ready before its boot entry is written');
      assert.equal(m.slot, 'B');
      assert.equal(m.version, '1.2.0');
      assert.equal(m.operationId, 'op-1');
      assert.deepEqual(m.lab, { boot: 'fail', health: 'ok' });
      assert.deepEqual(Object.keys(m.artifacts).sort(), ['initrd.img', 'rootfs.img', 'vmlinuz']);
      assert.equal(m.artifacts.vmlinuz?.path, 'esp/molt/b/vmlinuz');
      assert.equal(m.artifacts['rootfs.img']?.path, 'slots/b/rootfs.img');
      assert.equal(await h.store.staged('B'), undefined);
      assert.deepEqual(await h.store.manifest('B'), m);
      await rejectsWith(h.store.verify('B'), ErrorCode.SlotVerifyFailed);
      assert.deepEqual(
        await h.store.verify('B', 'op-1'),
        m,
        'the install verifies for its operation',
      );
      await rejectsWith(h.store.verify('B', 'op-2'), ErrorCode.SlotVerifyFailed);
      await rejectsWith(h.store.markReady('B', 'op-2'), ErrorCode.MachineInvalid);
      const ready = await h.store.markReady('B', 'op-1');
      assert.deepEqual(ready, { ...m, status: 'ready' });
      assert.deepEqual(await h.store.markReady('B', 'op-1'), ready, 'a re-run is a no-op');
      assert.deepEqual(await h.store.manifest('B'), ready);
      assert.deepEqual(await h.store.verify('B'), ready);
      assert.deepEqual(await h.store.verify('B', 'op-1'), ready);
      assert.equal(await h.store.manifest('A'), undefined, 'the other slot is untouched');
    });

    it('is a no-op when install runs again for the same operation, before and after ready', async () => {
      await h.stage('A', sampleImage('1.0.0'));
      const first = await h.store.install('A', 'op-1');
      assert.deepEqual(await h.store.install('A', 'op-1'), first);
      const ready = await h.store.markReady('A', 'op-1');
      assert.deepEqual(await h.store.install('A', 'op-1'), ready);
    });

    it('refuses to install when nothing is staged for another operation', async () => {
      await rejectsWith(h.store.install('A', 'op-1'), ErrorCode.MachineInvalid);
      await h.stage('A', sampleImage('1.0.0'));
      await h.store.install('A', 'op-1');
      await rejectsWith(h.store.install('A', 'op-2'), ErrorCode.MachineInvalid);
      await h.store.markReady('A', 'op-1');
      await rejectsWith(h.store.install('A', 'op-2'), ErrorCode.MachineInvalid);
    });

    it('checks a staged image before the slot is touched: a cmdline no bootloader may get is refused', async () => {
      await rejectsWith(h.store.checkStaged('B'), ErrorCode.MachineInvalid);
      await h.stage(
        'B',
        sampleImage('1.0.0', {
          artifacts: { ...sampleImage('1.0.0').artifacts, cmdline: bytes('quiet loglevel=3\n') },
        }),
      );
      assert.equal((await h.store.checkStaged('B')).version, '1.0.0');
      await h.stage(
        'B',
        sampleImage('1.1.0', {
          artifacts: { ...sampleImage('1.1.0').artifacts, cmdline: bytes('init=/bin/sh; reboot') },
        }),
      );
      await rejectsWith(h.store.checkStaged('B'), ErrorCode.ImageInvalid);
      assert.equal(await h.store.manifest('B'), undefined, 'the slot is untouched');
    });

    it('numbers generations strictly increasing across both slots', async () => {
      const gens: number[] = [];
      for (const [slot, v] of [
        ['A', '1.0.0'],
        ['B', '1.1.0'],
        ['A', '1.2.0'],
        ['A', '1.3.0'],
      ] as const) {
        await h.stage(slot, sampleImage(v));
        await h.store.markWriting(slot, `op-${v}`);
        gens.push((await h.store.install(slot, `op-${v}`)).generation);
        await h.store.markReady(slot, `op-${v}`);
      }
      assert.deepEqual(gens, [1, 2, 3, 4]);
    });

    it('marks a slot writing keeping its fields, and such a slot does not verify', async () => {
      await h.store.markWriting('A', 'op-0');
      assert.equal(await h.store.manifest('A'), undefined, 'an empty slot stays empty');
      await h.stage('A', sampleImage('1.0.0'));
      const m = await h.store.install('A', 'op-1');
      await h.store.markReady('A', 'op-1');
      await h.store.markWriting('A', 'op-2');
      const w = await h.store.manifest('A');
      assert.equal(w?.status, 'writing');
      assert.equal(w.version, m.version);
      assert.equal(w.imageDigest, m.imageDigest);
      assert.deepEqual(w.artifacts, m.artifacts);
      await rejectsWith(h.store.verify('A'), ErrorCode.SlotVerifyFailed);
    });

    it('fails verification of a corrupted artifact and of an empty slot', async () => {
      await rejectsWith(h.store.verify('B'), ErrorCode.SlotVerifyFailed);
      await h.stage('B', sampleImage('2.0.0'));
      await h.store.install('B', 'op-1');
      await h.store.markReady('B', 'op-1');
      await h.corrupt('B', 'rootfs.img');
      await rejectsWith(h.store.verify('B'), ErrorCode.SlotVerifyFailed);
    });

    it('marks a slot bad with its reason', async () => {
      await h.stage('B', sampleImage('2.0.0'));
      await h.store.install('B', 'op-1');
      await h.store.markBad('B', 'HealthDeadline');
      const m = await h.store.manifest('B');
      assert.equal(m?.status, 'bad');
      assert.equal(m.badReason, 'HealthDeadline');
      await rejectsWith(h.store.verify('B'), ErrorCode.SlotVerifyFailed);
    });

    it('discards a staged image', async () => {
      await h.stage('A', sampleImage('1.0.0'));
      await h.store.discardStaged('A');
      assert.equal(await h.store.staged('A'), undefined);
      await h.store.discardStaged('A');
      await rejectsWith(h.store.install('A', 'op-1'), ErrorCode.MachineInvalid);
    });

    it('keeps the installed slot when a new image is staged and discarded, unless the pull wrote it in place', async () => {
      await h.stage('A', sampleImage('1.0.0'));
      await h.store.install('A', 'op-1');
      const m = await h.store.markReady('A', 'op-1');
      await h.stage('A', sampleImage('1.1.0'));
      await h.store.discardStaged('A');
      if (h.partitionBytes === undefined) assert.deepEqual(await h.store.verify('A'), m);
      else
        await rejectsWith(
          h.store.verify('A'),
          ErrorCode.SlotVerifyFailed,
          'the pull overwrote the partition: the slot no longer holds its manifest',
        );
    });

    it('fails the read-back of an install whose bytes changed before VerifySlot', async () => {
      await h.stage('B', sampleImage('3.0.0'));
      await h.store.install('B', 'op-1');
      await h.corrupt('B', 'rootfs.img');
      await rejectsWith(h.store.verify('B', 'op-1'), ErrorCode.SlotVerifyFailed);
    });

    it('names the in-place targets of a pull, or none', async () => {
      const targets = (await h.store.pullTargets?.('B')) ?? {};
      if (h.partitionBytes === undefined) {
        assert.deepEqual(targets, {}, 'a store that stages every artifact names no target');
        return;
      }
      assert.deepEqual(Object.keys(targets), ['rootfs.img']);
      const b = targets['rootfs.img'];
      const a = ((await h.store.pullTargets?.('A')) ?? {})['rootfs.img'];
      assert.ok(a !== undefined && b !== undefined);
      assert.equal(b.capacity, h.partitionBytes);
      assert.ok(a.path !== b.path || a.offset !== b.offset, 'each slot has its own partition');
    });

    it('refuses a staged rootfs larger than the partition', async (t) => {
      if (h.partitionBytes === undefined) {
        t.skip('the store keeps no artifact in place');
        return;
      }
      const big = new Uint8Array(h.partitionBytes + 1).fill(7);
      const image = sampleImage('4.0.0');
      await h.stage('B', { ...image, artifacts: { ...image.artifacts, 'rootfs.img': big } });
      assert.equal(await h.store.staged('B'), undefined, 'not a complete pull');
      await rejectsWith(h.store.checkStaged('B'), ErrorCode.ImageTooLarge);
      assert.equal(await h.store.manifest('B'), undefined);
    });

    it('fits a rootfs of exactly the partition size', async (t) => {
      if (h.partitionBytes === undefined) {
        t.skip('the store keeps no artifact in place');
        return;
      }
      const exact = new Uint8Array(h.partitionBytes).fill(9);
      const image = sampleImage('4.1.0');
      await h.stage('A', { ...image, artifacts: { ...image.artifacts, 'rootfs.img': exact } });
      assert.equal((await h.store.checkStaged('A')).version, '4.1.0');
      const m = await h.store.install('A', 'op-1');
      const rootfs = m.artifacts['rootfs.img'];
      assert.ok(rootfs !== undefined);
      assert.equal(rootfs.size, h.partitionBytes);
      assert.equal(rootfs.path, 'slots/a/rootfs.img');
      assert.deepEqual(await h.store.verify('A', 'op-1'), m);
    });
  });
}
