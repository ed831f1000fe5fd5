// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import {
  DefaultSizes,
  MiB,
  minimumDiskBytes,
  PartitionOrder,
  PartitionType,
  planDisk,
  sfdiskScript,
} from './layout.ts';
import { checkImageFits } from './fit.ts';
import { formatSize, parseSize } from './size.ts';

const small = { ...DefaultSizes, slot: 16 * MiB };

describe('disk layout', () => {
  it('plans the five partitions of the contract on 1 MiB boundaries, EPHEMERAL taking the rest', () => {
    const plan = planDisk(4096 * MiB + 12345);
    assert.deepEqual(
      plan.partitions.map((p) => [p.number, p.name, p.offset / MiB, p.size / MiB, p.type]),
      [
        [1, 'molt-esp', 1, 256, PartitionType.Esp],
        [2, 'molt-a', 257, 1024, PartitionType.RootX86_64],
        [3, 'molt-b', 1281, 1024, PartitionType.RootX86_64],
        [4, 'molt-state', 2305, 128, PartitionType.LinuxData],
        [5, 'molt-ephemeral', 2433, 4096 - 1 - 2433, PartitionType.LinuxData],
      ],
    );
    assert.deepEqual(
      plan.partitions.map((p) => p.name),
      PartitionOrder,
    );
  });

  it('needs 1 + ESP + 2 × slot + STATE + 256 MiB + the backup GPT', () => {
    assert.equal(minimumDiskBytes(DefaultSizes), (1 + 256 + 2048 + 128 + 256 + 1) * MiB);
    const exact = planDisk(minimumDiskBytes(small), small);
    assert.equal(exact.partitions[4]?.size, 256 * MiB);
  });

  it('refuses a disk one byte too small with MOLT_DISK_TOO_SMALL and the sum in the message', () => {
    assert.throws(
      () => planDisk(minimumDiskBytes(small) - 1, small),
      (e) =>
        isMoltError(e, ErrorCode.DiskTooSmall) &&
        /needs at least 674 MiB/.test(e.message) &&
        e.details?.['minimumDiskBytes'] === minimumDiskBytes(small),
    );
  });

  it('refuses sizes that are not whole MiB or under the minimum', () => {
    for (const sizes of [
      { ...small, slot: MiB + 1 },
      { ...small, esp: 32 * MiB },
      { ...small, state: 0 },
    ])
      assert.throws(
        () => planDisk(8192 * MiB, sizes),
        (e) => isMoltError(e, ErrorCode.BadFlag),
      );
  });

  it('renders an sfdisk script in sectors with the GPT names', () => {
    const script = sfdiskScript(planDisk(minimumDiskBytes(small), small));
    assert.equal(
      script,
      [
        'label: gpt',
        'first-lba: 2048',
        `start=2048, size=524288, type=${PartitionType.Esp}, name="molt-esp"`,
        `start=526336, size=32768, type=${PartitionType.RootX86_64}, name="molt-a"`,
        `start=559104, size=32768, type=${PartitionType.RootX86_64}, name="molt-b"`,
        `start=591872, size=262144, type=${PartitionType.LinuxData}, name="molt-state"`,
        `start=854016, size=524288, type=${PartitionType.LinuxData}, name="molt-ephemeral"`,
        '',
      ].join('\n'),
    );
  });
});

describe('image fit', () => {
  const plan = planDisk(minimumDiskBytes(small), small);
  const fits = { kernel: 8 * MiB, initrd: 30 * MiB, rootfs: 16 * MiB };

  it('accepts an image whose rootfs fills its slot exactly', () => {
    checkImageFits(fits, plan, 4 * MiB);
  });
  it('refuses a rootfs one byte larger than the slot: MOLT_IMAGE_TOO_LARGE', () => {
    assert.throws(
      () => {
        checkImageFits({ ...fits, rootfs: 16 * MiB + 1 }, plan, 0);
      },
      (e) =>
        isMoltError(e, ErrorCode.ImageTooLarge) && /larger than a slot of 16 MiB/.test(e.message),
    );
  });
  it('refuses kernels the ESP cannot hold three times', () => {
    assert.throws(
      () => {
        checkImageFits({ ...fits, initrd: 80 * MiB }, plan, 0);
      },
      (e) => isMoltError(e, ErrorCode.ImageTooLarge) && /--esp-size/.test(e.hint ?? ''),
    );
  });
  it('refuses an image without an initramfs: MOLT_IMAGE_INVALID', () => {
    assert.throws(
      () => {
        checkImageFits({ ...fits, initrd: undefined }, plan, 0);
      },
      (e) => isMoltError(e, ErrorCode.ImageInvalid) && /no initrd\.img/.test(e.message),
    );
  });
});

describe('sizes', () => {
  it('reads binary sizes', () => {
    assert.equal(parseSize('16M', 'x'), 16 * MiB);
    assert.equal(parseSize('256MiB', 'x'), 256 * MiB);
    assert.equal(parseSize('1.5G', 'x'), 1536 * MiB);
    assert.equal(parseSize('4096', 'x'), 4096);
    for (const bad of ['', '-1', '1X', '0', 'M'])
      assert.throws(
        () => parseSize(bad, '--slot-size'),
        (e) => isMoltError(e, ErrorCode.BadFlag),
      );
  });
  it('prints sizes', () => {
    assert.equal(formatSize(1536 * MiB), '1.5 GiB');
    assert.equal(formatSize(100), '100 bytes');
  });
});
