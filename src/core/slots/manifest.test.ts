// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import { areaDir, artifactPath, slotManifestPath, stagedRecordPath } from './layout.ts';
import { nextGeneration, parseSlotManifest, parseStagedRecord } from './manifest.ts';
import type { SlotManifest } from './slot.ts';

const manifest: SlotManifest = {
  schema: 1,
  slot: 'B',
  status: 'bad',
  badReason: 'HealthDeadline',
  imageRef: 'r.io/a:1',
  imageDigest: `sha256:${'1'.repeat(64)}`,
  manifestDigest: `sha256:${'2'.repeat(64)}`,
  version: '1.0.0',
  kubeletVersion: 'v1.36.3',
  generation: 3,
  artifacts: {
    vmlinuz: {
      path: 'esp/molt/b/vmlinuz',
      size: 3,
      digest: `sha256:${'3'.repeat(64)}`,
      layerDigest: `sha256:${'4'.repeat(64)}`,
    },
  },
  lab: { boot: 'ok', health: 'never' },
  operationId: 'op-1',
  writtenAt: '2026-11-22T10:00:00.000Z',
};

describe('slot manifests and staged records', () => {
  it('round-trips slot.json through JSON', () => {
    assert.deepEqual(parseSlotManifest(JSON.parse(JSON.stringify(manifest))), manifest);
  });

  it('names the bad field of a damaged slot.json with MOLT_MACHINE_INVALID', () => {
    for (const [patch, field] of [
      [{ schema: 2 }, 'schema'],
      [{ status: 'ok' }, 'status'],
      [{ generation: 0 }, 'generation'],
      [{ slot: 'C' }, 'slot'],
      [{ artifacts: { evil: {} } }, 'artifacts.evil'],
      [{ artifacts: { vmlinuz: { path: 'x', size: -1, digest: 'd' } } }, 'size'],
      [{ lab: { boot: 'x' } }, 'boot'],
      [{ kubeletVersion: 136 }, 'kubeletVersion'],
    ] as const)
      assert.throws(
        () => parseSlotManifest({ ...manifest, ...patch }),
        (e: unknown) => isMoltError(e, ErrorCode.MachineInvalid) && e.message.includes(field),
        field,
      );
    assert.throws(
      () => parseSlotManifest(null),
      (e: unknown) => isMoltError(e, ErrorCode.MachineInvalid),
    );
  });

  it('parses a staged record with and without a generation', () => {
    const staged = {
      schema: 1,
      slot: 'A',
      imageRef: 'r.io/a:1',
      imageDigest: 'sha256:x',
      manifestDigest: 'sha256:y',
      version: '1',
      artifacts: { 'rootfs.img': { size: 1, digest: 'sha256:z' } },
      pulledAt: 'now',
    };
    assert.deepEqual(parseStagedRecord(staged), staged);
    assert.equal(parseStagedRecord({ ...staged, generation: 4 }).generation, 4);
    const node = parseStagedRecord({ ...staged, kubeletVersion: 'v1.36.3' });
    assert.equal(node.kubeletVersion, 'v1.36.3');
    assert.throws(
      () => parseStagedRecord({ ...staged, manifestDigest: undefined }),
      (e: unknown) => isMoltError(e, ErrorCode.MachineInvalid),
    );
  });

  it('numbers the next generation above both slots', () => {
    assert.equal(nextGeneration([undefined, undefined]), 1);
    assert.equal(nextGeneration([manifest, { ...manifest, generation: 9 }]), 10);
    assert.equal(nextGeneration([undefined, manifest]), 4);
  });

  it('lays kernels on the ESP and the rootfs beside slot.json', () => {
    assert.equal(artifactPath('A', 'vmlinuz'), 'esp/molt/a/vmlinuz');
    assert.equal(artifactPath('B', 'initrd.img', true), 'esp/molt/b.next/initrd.img');
    assert.equal(artifactPath('B', 'cmdline'), 'slots/b/cmdline');
    assert.equal(areaDir('A', 'slot', true), 'slots/a.next');
    assert.equal(slotManifestPath('B'), 'slots/b/slot.json');
    assert.equal(stagedRecordPath('B'), 'slots/b.next/staged.json');
  });
});
