// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import type { StagedRecord } from '../slots/manifest.ts';
import { checkStagedImage } from './staged-image.ts';
import { bootEntryMismatch } from './slot-entry.ts';

const artifact = (size: number) => ({ size, digest: `sha256:${'1'.repeat(64)}` });

function record(extra: Partial<StagedRecord> = {}): StagedRecord {
  return {
    schema: 1,
    slot: 'B',
    imageRef: 'registry.test/molt/installer:2.0.0',
    imageDigest: `sha256:${'2'.repeat(64)}`,
    manifestDigest: `sha256:${'2'.repeat(64)}`,
    version: '2.0.0',
    artifacts: { vmlinuz: artifact(10), 'initrd.img': artifact(5), 'rootfs.img': artifact(100) },
    pulledAt: '2026-11-22T10:00:00.000Z',
    ...extra,
  };
}

const refused = (code: string, pattern: RegExp) => (e: unknown) =>
  isMoltError(e) && e.code === code && pattern.test(e.message);

describe('checkStagedImage', () => {
  it('returns the entry the slot will get: its final ESP paths, molt options and the cmdline', () => {
    const entry = checkStagedImage({
      slot: 'B',
      record: record({ artifacts: { ...record().artifacts, cmdline: artifact(12) } }),
      cmdline: ' quiet  loglevel=3\n',
    });
    assert.deepEqual(entry, {
      slot: 'B',
      id: 'molt-b',
      title: 'molt 2.0.0 (slot B)',
      linux: '/molt/b/vmlinuz',
      initrd: '/molt/b/initrd.img',
      options: 'molt.slot=B root=PARTLABEL=molt-b panic=10 quiet loglevel=3',
      version: '1',
    });
  });

  it('refuses a cmdline molt would not pass to a bootloader, as the boot entry write used to', () => {
    for (const cmdline of ['init=/bin/sh; reboot', 'a="b c"', 'x=$y', 'a\\b', '{x}', 'é'])
      assert.throws(
        () => checkStagedImage({ slot: 'B', record: record(), cmdline }),
        refused(ErrorCode.ImageInvalid, /cmdline/),
        cmdline,
      );
  });

  it('refuses a cmdline longer than the kernel command line, raw or rendered', () => {
    assert.throws(
      () => checkStagedImage({ slot: 'B', record: record(), cmdline: 'a'.repeat(2049) }),
      refused(ErrorCode.ImageInvalid, /2049 bytes/),
    );
    assert.throws(
      () => checkStagedImage({ slot: 'B', record: record(), cmdline: 'a'.repeat(2040) }),
      refused(ErrorCode.ImageInvalid, /kernel command line is 2083 bytes/),
    );
  });

  it('refuses a staged set without a kernel or rootfs, an empty kernel, and too many bytes', () => {
    const noKernel = { 'rootfs.img': artifact(100) };
    assert.throws(
      () => checkStagedImage({ slot: 'B', record: record({ artifacts: noKernel }), cmdline: '' }),
      refused(ErrorCode.ImageInvalid, /no vmlinuz/),
    );
    const empty = { ...record().artifacts, vmlinuz: artifact(0) };
    assert.throws(
      () => checkStagedImage({ slot: 'B', record: record({ artifacts: empty }), cmdline: '' }),
      refused(ErrorCode.ImageInvalid, /empty vmlinuz/),
    );
    assert.throws(
      () => checkStagedImage({ slot: 'B', record: record(), cmdline: '', maxBytes: 100 }),
      refused(ErrorCode.ImageTooLarge, /115 bytes/),
    );
  });

  it('refuses a record staged for the other slot', () => {
    assert.throws(
      () => checkStagedImage({ slot: 'A', record: record(), cmdline: '' }),
      refused(ErrorCode.MachineInvalid, /for slot B/),
    );
  });
});

describe('bootEntryMismatch', () => {
  const expected = checkStagedImage({ slot: 'B', record: record(), cmdline: 'quiet' });
  it('accepts the same kernel, initramfs and options (title and version aside)', () => {
    const written = { ...expected, title: 'renamed', version: '9' };
    assert.equal(bootEntryMismatch(expected, written), undefined);
  });
  it('names the first part that differs', () => {
    assert.match(
      bootEntryMismatch(expected, { ...expected, linux: '/molt/a/vmlinuz' }) ?? '',
      /kernel is "\/molt\/a\/vmlinuz", not "\/molt\/b\/vmlinuz"/,
    );
    assert.match(
      bootEntryMismatch(expected, { linux: expected.linux, options: expected.options }) ?? '',
      /initramfs/,
    );
    assert.match(
      bootEntryMismatch(expected, { ...expected, options: 'molt.slot=B' }) ?? '',
      /options/,
    );
  });
});
