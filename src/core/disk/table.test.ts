// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import { diskUsers, mountedDevices, requireUnused } from './in-use.ts';
import { PartitionOrder } from './layout.ts';
import { judgeDisk, requireInstallable, type StateContent } from './table.ts';

const none = { wipe: false, overwriteMachine: false };

const gpt = (names: readonly (string | undefined)[]) => ({
  kind: 'table' as const,
  table: { label: 'gpt', partitions: names.map((name) => ({ name, type: 'x' })) },
});

describe("is this disk molt's?", () => {
  it('a bare disk without signatures is empty', () => {
    assert.deepEqual(judgeDisk({ kind: 'bare', signatures: [] }), { kind: 'empty' });
  });
  it("GPT with exactly the five names in order is molt's", () => {
    assert.deepEqual(judgeDisk(gpt(PartitionOrder)), { kind: 'molt' });
  });
  it('anything else is foreign, and says what it is', () => {
    const cases: [Parameters<typeof judgeDisk>[0], RegExp][] = [
      [gpt([...PartitionOrder].reverse()), /molt-ephemeral, molt-state/],
      [gpt(PartitionOrder.slice(0, 4)), /not molt-esp/],
      [gpt(['EFI', undefined]), /EFI, \(unnamed\)/],
      [gpt([]), /empty GPT/],
      [{ kind: 'table', table: { label: 'dos', partitions: [] } }, /dos partition table/],
      [{ kind: 'bare', signatures: ['ext4'] }, /no partition table but ext4/],
    ];
    for (const [content, reason] of cases) {
      assert.match(JSON.stringify(judgeDisk(content)), /"kind":"foreign"/);
      assert.match(JSON.stringify(judgeDisk(content)), reason);
    }
  });
  it('refuses a foreign disk without --wipe, accepts it with', () => {
    const foreign = judgeDisk(gpt(['root']));
    assert.throws(
      () => {
        requireInstallable(foreign, none, '/dev/sdb');
      },
      (e) => isMoltError(e, ErrorCode.DiskNotMolt) && /--wipe/.test(e.hint ?? ''),
    );
    requireInstallable(foreign, { ...none, wipe: true }, '/dev/sdb');
    requireInstallable(judgeDisk(gpt(PartitionOrder)), none, '/dev/sdb');
  });
});

describe("does molt's layout hold a machine?", () => {
  const layout = (state: StateContent) => ({ ...gpt(PartitionOrder), state });
  const machine = judgeDisk(
    layout({ filesystem: 'ext4', entries: ['config.yaml', 'journal', 'pki'], node: 'db-1' }),
  );

  it('STATE without a filesystem, or with an empty one, is an interrupted install: reused', () => {
    assert.deepEqual(judgeDisk(layout({})), { kind: 'molt' });
    assert.deepEqual(judgeDisk(layout({ filesystem: 'ext4', entries: [] })), { kind: 'molt' });
  });
  it('STATE holding anything, or what molt cannot list, is a machine', () => {
    assert.deepEqual(machine, {
      kind: 'machine',
      holds: 'its STATE holds the machine db-1 (config.yaml, journal, pki)',
      node: 'db-1',
    });
    assert.deepEqual(judgeDisk(layout({ filesystem: 'ext4', entries: ['notes'] })), {
      kind: 'machine',
      holds: 'its STATE holds a machine (notes)',
    });
    assert.deepEqual(judgeDisk(layout({ filesystem: 'xfs' })), {
      kind: 'machine',
      holds: 'its STATE holds xfs, which molt cannot list',
    });
  });
  it('refuses a machine unless told --overwrite-machine; --wipe is not enough', () => {
    for (const consent of [none, { ...none, wipe: true }])
      assert.throws(
        () => {
          requireInstallable(machine, consent, '/dev/sdb');
        },
        (e) =>
          isMoltError(e, ErrorCode.DiskHoldsMachine) &&
          /^\/dev\/sdb is a molt machine's disk: .*db-1/.test(e.message) &&
          /--overwrite-machine/.test(e.hint ?? ''),
      );
    requireInstallable(machine, { ...none, overwriteMachine: true }, '/dev/sdb');
  });
});

describe('is the disk in use?', () => {
  const mountinfo = [
    '22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw',
    '40 22 7:4 / /mnt/state rw - ext4 /dev/loop0p4 rw',
    '',
  ].join('\n');
  const swaps = 'Filename\tType\tSize\tUsed\tPriority\n/dev/loop0p3  partition 100 0 -2\n';

  it('reads the mounted devices of mountinfo', () => {
    assert.equal(mountedDevices(mountinfo).get('7:4'), '/mnt/state');
  });
  it('names mounts, swap, holders and loop devices', () => {
    const reasons = diskUsers({
      devices: [
        { name: 'loop0', devNumber: '7:0', holders: [] },
        { name: 'loop0p3', devNumber: '7:3', holders: ['dm-0'] },
        { name: 'loop0p4', devNumber: '7:4', holders: [] },
      ],
      mountinfo,
      swaps,
      loopDevices: ['loop9'],
    });
    assert.deepEqual(reasons, [
      '/dev/loop0p3 is a swap area',
      '/dev/loop0p3 is held by /dev/dm-0',
      '/dev/loop0p4 is mounted at /mnt/state',
      'it backs the loop device /dev/loop9',
    ]);
  });
  it('passes a free disk and refuses a used one with MOLT_DISK_IN_USE', () => {
    const free = {
      devices: [{ name: 'sdb', devNumber: '8:16', holders: [] }],
      mountinfo,
      swaps,
      loopDevices: [],
    };
    requireUnused(free, '/dev/sdb');
    assert.throws(
      () => {
        requireUnused({ ...free, loopDevices: ['loop1'] }, 'disk.img');
      },
      (e) => isMoltError(e, ErrorCode.DiskInUse) && /losetup -d \/dev\/loop1/.test(e.hint ?? ''),
    );
  });
});
