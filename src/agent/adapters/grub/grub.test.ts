// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GrubCfg } from '../../../core/boot/grub-cfg.ts';
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
      assert.equal(await readFile(join(root, 'esp', 'grub', 'grub.cfg'), 'utf8'), GrubCfg);
      assert.equal(
        await readFile(join(root, 'esp', 'molt', 'a', 'grub.cfg'), 'utf8'),
        '# molt 1.0.0 (slot A)\nlinux /molt/a/vmlinuz molt.slot=A root=PARTLABEL=molt-a panic=10\ninitrd /molt/a/initrd.img\n',
      );
      assert.match(
        await readFile(join(root, 'esp', 'molt', 'b', 'grub.cfg'), 'utf8'),
        /^linux \/molt\/b\/vmlinuz molt\.slot=B root=PARTLABEL=molt-b panic=10 console=ttyS0,115200 quiet$/m,
      );
      const env = parseGrubenv(await readFile(join(root, 'esp', 'grub', 'grubenv')));
      assert.equal(grubenvGet(env, 'saved_entry'), 'molt-a');
      assert.equal(grubenvGet(env, 'next_entry'), 'molt-b');
      assert.deepEqual([grubenvGet(env, 'molt_a'), grubenvGet(env, 'molt_b')], ['ok', 'ok']);
      // The versions the menu titles show: `molt 1.0.0 (slot A)`.
      assert.deepEqual(
        [grubenvGet(env, 'molt_a_version'), grubenvGet(env, 'molt_b_version')],
        ['1.0.0', '1.2.0'],
      );
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

  it('never rewrites grub.cfg and changes grubenv only in place: a power cut on FAT cannot break them (docs/adr/0008)', async () => {
    const { root, remove } = await bootloaderTestRoot();
    try {
      const b = createGrubBootloader(root);
      await b.writeEntry('A', testManifest('A', 1));
      await b.commit('A');
      const cfgPath = join(root, 'esp', 'grub', 'grub.cfg');
      const envPath = join(root, 'esp', 'grub', 'grubenv');
      const cfg = await stat(cfgPath);
      const env = await stat(envPath);
      const envBefore = await readFile(envPath);
      // An upgrade to B, a mark-bad, a rollback target rewritten: every change of state.
      await b.removeEntry('B');
      await b.writeEntry('B', testManifest('B', 2));
      await b.armBootOnce('B');
      await b.commit('B');
      await b.markBad('A');
      await b.writeEntry('A', testManifest('A', 3, '3.0.0'));
      await b.disarmBootOnce();
      const cfgAfter = await stat(cfgPath);
      assert.deepEqual(
        [cfgAfter.ino, cfgAfter.mtimeMs],
        [cfg.ino, cfg.mtimeMs],
        'grub.cfg untouched',
      );
      assert.equal(await readFile(cfgPath, 'utf8'), GrubCfg);
      const envAfter = await stat(envPath);
      assert.equal(envAfter.ino, env.ino, 'grubenv keeps its inode: rewritten in place');
      assert.equal(envAfter.size, 1024);
      assert.notDeepEqual(await readFile(envPath), envBefore, 'and it did change');
      assert.equal((await b.read()).committed, 'B');
    } finally {
      await remove();
    }
  });

  it('refuses a grub.cfg it did not write instead of overwriting it', async () => {
    const { root, remove } = await bootloaderTestRoot();
    try {
      await mkdir(join(root, 'esp', 'grub'), { recursive: true });
      await writeFile(join(root, 'esp', 'grub', 'grub.cfg'), 'menuentry mine {\n}\n');
      const b = createGrubBootloader(root);
      await assert.rejects(
        () => b.writeEntry('A', testManifest('A', 1)),
        (e) => isMoltError(e, ErrorCode.BootloaderInvalid),
      );
      assert.equal(
        await readFile(join(root, 'esp', 'grub', 'grub.cfg'), 'utf8'),
        'menuentry mine {\n}\n',
      );
    } finally {
      await remove();
    }
  });
});
