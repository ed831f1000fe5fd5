// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { grubenvGet, parseGrubenv } from '../../../core/boot/grubenv.ts';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { bootMachine } from '../../../lab/firmware/boot.ts';
import {
  bootloaderConformance,
  bootloaderTestRoot,
  fileSnapshot,
  testManifest,
} from '../../../testkit/bootloader-conformance.ts';
import { createGrubBootloader } from './index.ts';

bootloaderConformance('grub', async () => {
  const { root, remove } = await bootloaderTestRoot();
  return {
    bootloader: createGrubBootloader(root),
    boot: async () => {
      const r = await bootMachine(root, 'grub');
      return r.ok ? r.slot : null;
    },
    snapshot: () => fileSnapshot(join(root, 'esp', 'grub')),
    cleanup: remove,
  };
});

describe('GrubBootloader files', () => {
  it('writes the grubenv grub-reboot / grub-set-default would, and menu entries with the image cmdline', async () => {
    const { root, remove } = await bootloaderTestRoot();
    try {
      const b = createGrubBootloader(root);
      const manifestB = {
        ...testManifest('B', 2),
        artifacts: {
          ...testManifest('B', 2).artifacts,
          cmdline: { path: 'slots/b/cmdline', size: 20, digest: 'sha256:x' },
        },
      };
      await mkdir(join(root, 'slots', 'b'), { recursive: true });
      await writeFile(join(root, 'slots', 'b', 'cmdline'), ' console=ttyS0,115200\n quiet\n');
      await b.writeEntry('A', testManifest('A', 1, '1.0.0'));
      await b.commit('A');
      await b.writeEntry('B', manifestB);
      await b.armBootOnce('B');
      const cfg = await readFile(join(root, 'esp', 'grub', 'grub.cfg'), 'utf8');
      assert.match(
        cfg,
        /menuentry 'molt 1\.0\.0 \(slot A\)' --id molt-a \{\n\tlinux \/molt\/a\/vmlinuz molt\.slot=A root=PARTLABEL=molt-a panic=10\n\tinitrd \/molt\/a\/initrd\.img\n\}/,
      );
      assert.match(
        cfg,
        /\tlinux \/molt\/b\/vmlinuz molt\.slot=B root=PARTLABEL=molt-b panic=10 console=ttyS0,115200 quiet\n/,
      );
      const env = parseGrubenv(await readFile(join(root, 'esp', 'grub', 'grubenv')));
      assert.equal(grubenvGet(env, 'saved_entry'), 'molt-a');
      assert.equal(grubenvGet(env, 'next_entry'), 'molt-b');
    } finally {
      await remove();
    }
  });

  it('refuses a grubenv it cannot read, and an image cmdline GRUB would interpret', async () => {
    const { root, remove } = await bootloaderTestRoot();
    try {
      const b = createGrubBootloader(root);
      await b.writeEntry('A', testManifest('A', 1));
      await b.commit('A');
      await writeFile(join(root, 'esp', 'grub', 'grubenv'), 'not a grubenv');
      await assert.rejects(
        () => b.read(),
        (e) => isMoltError(e, ErrorCode.BootloaderInvalid),
      );
      await assert.rejects(
        () => b.armBootOnce('A'),
        (e) => isMoltError(e, ErrorCode.BootloaderInvalid),
      );
      await mkdir(join(root, 'slots', 'b'), { recursive: true });
      await writeFile(join(root, 'slots', 'b', 'cmdline'), 'init=$(reboot)');
      const bad = {
        ...testManifest('B', 2),
        artifacts: {
          ...testManifest('B', 2).artifacts,
          cmdline: { path: 'slots/b/cmdline', size: 1, digest: 'sha256:x' },
        },
      };
      await assert.rejects(
        () => b.writeEntry('B', bad),
        (e) => isMoltError(e, ErrorCode.ImageInvalid),
      );
    } finally {
      await remove();
    }
  });
});
