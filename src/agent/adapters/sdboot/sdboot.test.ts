// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bootMachine } from '../../../lab/firmware/boot.ts';
import {
  bootloaderConformance,
  bootloaderTestRoot,
  fileSnapshot,
  testManifest,
} from '../../../testkit/bootloader-conformance.ts';
import { createSdBootBootloader } from './index.ts';

bootloaderConformance('systemd-boot', async () => {
  const { root, remove } = await bootloaderTestRoot();
  return {
    bootloader: createSdBootBootloader(root),
    boot: async () => {
      const r = await bootMachine(root, 'systemd-boot');
      return r.ok ? r.slot : null;
    },
    snapshot: () => fileSnapshot(join(root, 'esp', 'loader')),
    cleanup: remove,
  };
});

describe('SdBootBootloader files', () => {
  it('names entries by state and writes sort-key, version and options', async () => {
    const { root, remove } = await bootloaderTestRoot();
    const entries = (): Promise<string[]> =>
      readdir(join(root, 'esp', 'loader', 'entries')).then((n) => n.sort());
    try {
      const b = createSdBootBootloader(root);
      await b.writeEntry('A', testManifest('A', 1, '1.0.0'));
      assert.deepEqual(await entries(), ['molt-a+0.conf']);
      await b.commit('A');
      await b.writeEntry('B', testManifest('B', 2, '2.0.0'));
      await b.armBootOnce('B');
      assert.deepEqual(await entries(), ['molt-a.conf', 'molt-b+1.conf']);
      assert.equal(
        await readFile(join(root, 'esp', 'loader', 'entries', 'molt-b+1.conf'), 'utf8'),
        'title molt 2.0.0 (slot B)\nversion 2\nsort-key molt\nlinux /molt/b/vmlinuz\ninitrd /molt/b/initrd.img\noptions molt.slot=B root=PARTLABEL=molt-b panic=10\n',
      );
      assert.equal(
        await readFile(join(root, 'esp', 'loader', 'loader.conf'), 'utf8'),
        'default molt-*\ntimeout 0\n',
      );
      assert.deepEqual(await b.read(), {
        bootloader: 'systemd-boot',
        committed: 'A',
        oneShot: 'B',
        entries: [
          { slot: 'A', state: 'committed' },
          { slot: 'B', state: 'trial', triesLeft: 1, triesDone: 0 },
        ],
      });
    } finally {
      await remove();
    }
  });

  it('a failed trial is passed over (tries exhausted) and shows as bad', async () => {
    const { root, remove } = await bootloaderTestRoot();
    try {
      const b = createSdBootBootloader(root);
      await b.writeEntry('A', testManifest('A', 1));
      await b.commit('A');
      await b.writeEntry('B', testManifest('B', 2));
      await b.armBootOnce('B');
      assert.deepEqual(await bootMachine(root, 'systemd-boot'), {
        ok: true,
        slot: 'B',
        entryId: 'molt-b+1.conf',
        cmdline: 'molt.slot=B root=PARTLABEL=molt-b panic=10',
      });
      const view = await b.read();
      assert.deepEqual(
        view.entries.find((e) => e.slot === 'B'),
        { slot: 'B', state: 'bad', triesLeft: 0, triesDone: 1 },
      );
      assert.equal(
        await bootMachine(root, 'systemd-boot').then((r) => (r.ok ? r.entryId : r.reason)),
        'molt-a.conf',
      );
    } finally {
      await remove();
    }
  });

  it('rolling back to an older slot raises its version above the committed one', async () => {
    const { root, remove } = await bootloaderTestRoot();
    try {
      const b = createSdBootBootloader(root);
      await b.writeEntry('A', testManifest('A', 1));
      await b.commit('A');
      await b.writeEntry('B', testManifest('B', 7));
      await b.armBootOnce('B');
      await b.commit('B');
      await b.armBootOnce('A');
      const body = await readFile(join(root, 'esp', 'loader', 'entries', 'molt-a+1.conf'), 'utf8');
      assert.match(body, /^version 8$/m);
    } finally {
      await remove();
    }
  });
});
