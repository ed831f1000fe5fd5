// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { renderBlsEntry, renderLoaderConf } from '../../core/boot/bls.ts';
import { GrubCfg, renderGrubEntry, type GrubMenuEntry } from '../../core/boot/grub-cfg.ts';
import {
  createGrubenv,
  encodeGrubenv,
  grubenvGet,
  grubenvSet,
  parseGrubenv,
} from '../../core/boot/grubenv.ts';
import { bootMachine } from './boot.ts';

let root = '';
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'molt-fw-'));
  for (const d of ['a', 'b']) {
    await mkdir(join(root, 'esp', 'molt', d), { recursive: true });
    await writeFile(join(root, 'esp', 'molt', d, 'vmlinuz'), d);
  }
});
afterEach(() => rm(root, { recursive: true, force: true }));

const entry = (slot: 'A' | 'B'): GrubMenuEntry => ({
  id: `molt-${slot.toLowerCase()}`,
  title: `molt (slot ${slot})`,
  linux: `/molt/${slot.toLowerCase()}/vmlinuz`,
  options: `molt.slot=${slot} panic=10`,
});

async function grubFiles(vars: Record<string, string>, cfg = GrubCfg): Promise<string> {
  await mkdir(join(root, 'esp', 'grub'), { recursive: true });
  for (const slot of ['A', 'B'] as const)
    await writeFile(
      join(root, 'esp', 'molt', slot.toLowerCase(), 'grub.cfg'),
      renderGrubEntry(entry(slot)),
    );
  let env = createGrubenv();
  env = grubenvSet(grubenvSet(env, 'molt_a', 'ok'), 'molt_b', 'ok');
  for (const [k, v] of Object.entries(vars)) env = grubenvSet(env, k, v);
  await writeFile(join(root, 'esp', 'grub', 'grub.cfg'), cfg);
  const path = join(root, 'esp', 'grub', 'grubenv');
  await writeFile(path, encodeGrubenv(env));
  return path;
}

describe('lab firmware: GRUB', () => {
  it('boots next_entry once, consuming it in place (same inode, 1024 bytes), then saved_entry', async () => {
    const envPath = await grubFiles({ saved_entry: 'molt-a', next_entry: 'molt-b' });
    const inode = (await stat(envPath)).ino;
    assert.deepEqual(await bootMachine(root, 'grub'), {
      ok: true,
      slot: 'B',
      entryId: 'molt-b',
      cmdline: 'BOOT_IMAGE=/molt/b/vmlinuz molt.slot=B panic=10',
    });
    const after = await readFile(envPath);
    assert.equal((await stat(envPath)).ino, inode);
    assert.equal(after.length, 1024);
    assert.equal(grubenvGet(parseGrubenv(after), 'next_entry'), '');
    assert.equal(await bootMachine(root, 'grub').then((r) => (r.ok ? r.slot : r.reason)), 'A');
  });

  it('falls back to the committed entry when the trial kernel is missing', async () => {
    await grubFiles({ saved_entry: 'molt-a', next_entry: 'molt-b' });
    await rm(join(root, 'esp', 'molt', 'b'), { recursive: true });
    assert.equal(
      await bootMachine(root, 'grub').then((r) => (r.ok ? r.entryId : r.reason)),
      'molt-a',
    );
  });

  it('lists a slot only while grubenv lets it boot, and falls back when its entry file is missing', async () => {
    await grubFiles({ saved_entry: 'molt-b', molt_b: '' });
    assert.equal(await bootMachine(root, 'grub').then((r) => (r.ok ? r.slot : r.reason)), 'A');
    await grubFiles({ saved_entry: 'molt-a', next_entry: 'molt-b' });
    await rm(join(root, 'esp', 'molt', 'b', 'grub.cfg'));
    assert.equal(
      await bootMachine(root, 'grub').then((r) => (r.ok ? r.entryId : r.reason)),
      'molt-a',
    );
  });

  it('reports why nothing boots', async () => {
    const r = await bootMachine(root, 'grub');
    assert.deepEqual(r, { ok: false, reason: 'GRUB: no grub.cfg on the ESP' });
    await grubFiles({}, 'set default=0\n');
    assert.match(
      await bootMachine(root, 'grub').then((x) => (x.ok ? '' : x.reason)),
      /not written by this version of molt/,
    );
    await grubFiles({ saved_entry: 'molt-a' });
    await rm(join(root, 'esp', 'molt'), { recursive: true });
    assert.match(
      await bootMachine(root, 'grub').then((x) => (x.ok ? '' : x.reason)),
      /nothing to boot/,
    );
  });
});

describe('lab firmware: systemd-boot', () => {
  async function sdFiles(entries: Record<string, ['A' | 'B', number]>): Promise<void> {
    const dir = join(root, 'esp', 'loader', 'entries');
    await mkdir(dir, { recursive: true });
    await writeFile(join(root, 'esp', 'loader', 'loader.conf'), renderLoaderConf());
    for (const [name, [slot, version]] of Object.entries(entries)) {
      const body = renderBlsEntry({
        title: `molt (slot ${slot})`,
        version: String(version),
        sortKey: 'molt',
        linux: `/molt/${slot.toLowerCase()}/vmlinuz`,
        options: `molt.slot=${slot} panic=10`,
      });
      await writeFile(join(dir, name), body);
    }
  }
  const names = (): Promise<string[]> =>
    readdir(join(root, 'esp', 'loader', 'entries')).then((n) => n.sort());

  it('counts the trial down by renaming, then exhausts it and falls back to the good entry', async () => {
    await sdFiles({ 'molt-a.conf': ['A', 1], 'molt-b+2.conf': ['B', 2] });
    const slots: string[] = [];
    for (let i = 0; i < 4; i += 1)
      slots.push(await bootMachine(root, 'systemd-boot').then((r) => (r.ok ? r.slot : r.reason)));
    assert.deepEqual(slots, ['B', 'B', 'A', 'A']);
    assert.deepEqual(await names(), ['molt-a.conf', 'molt-b+0-2.conf']);
  });

  it('boots nothing without entries', async () => {
    assert.deepEqual(await bootMachine(root, 'systemd-boot'), {
      ok: false,
      reason: 'systemd-boot: no boot loader entry to boot',
    });
  });
});
