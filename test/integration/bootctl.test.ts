// SPDX-License-Identifier: Apache-2.0
// The systemd-boot back-end against systemd's own reader: `bootctl list` (252, extracted by
// scripts/setup.sh) over an ESP on tmpfs must report molt's entries, counters, order and default
// exactly as molt and its sd-boot model (core/boot/sdboot-firmware.ts) intend, at every step of an
// upgrade, a failed trial and a rollback. Needs root (mount -t tmpfs).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, mkdir, readdir, readFile } from 'node:fs/promises';
import { join, basename } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { sdBoot, sdBootMenu } from '../../src/core/boot/firmware.ts';
import { createSdBootBootloader } from '../../src/agent/adapters/sdboot/index.ts';
import { bootMachine } from '../../src/lab/firmware/boot.ts';
import { bootloaderTestRoot, testManifest } from '../../src/testkit/bootloader-conformance.ts';

const run = promisify(execFile);
const BOOTCTL = join(import.meta.dirname, '..', '..', '.molt', 'tools', 'bootctl');

interface Listed {
  id: string;
  path: string;
  version?: string;
  sortKey?: string;
  options?: string;
  linux?: string;
  initrd?: string[];
  triesLeft?: number;
  triesDone?: number;
}

let root = '';
let remove = async (): Promise<void> => {};
let mounted = false;

async function bootctl(json: boolean): Promise<string> {
  const args = [
    `--esp-path=${join(root, 'esp')}`,
    '--no-variables',
    ...(json ? ['--json=short'] : []),
    'list',
  ];
  const { stdout } = await run(BOOTCTL, args, {
    env: {
      ...process.env,
      SYSTEMD_RELAX_ESP_CHECKS: '1',
      SYSTEMD_COLORS: '0',
      SYSTEMD_PAGER: 'cat',
    },
  });
  return stdout;
}

async function listed(): Promise<Listed[]> {
  return (await bootctl(true))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Listed);
}

/** The entry bootctl marks `(default)`, by file name. */
async function bootctlDefault(): Promise<string | undefined> {
  const block = (await bootctl(false)).split(/\n\s*\n/).find((b) => /title: .*\(default\)/.test(b));
  const source = block === undefined ? undefined : /source: (\S+)/.exec(block)?.[1];
  return source === undefined ? undefined : basename(source);
}

/** molt's sd-boot model over the same directory: menu order (file names) and the default. */
async function model(): Promise<{ order: string[]; chosen: string | undefined }> {
  const dir = join(root, 'esp', 'loader', 'entries');
  const files = await Promise.all(
    (await readdir(dir)).map(async (fileName) => ({
      fileName,
      body: await readFile(join(dir, fileName), 'utf8'),
    })),
  );
  const conf = await readFile(join(root, 'esp', 'loader', 'loader.conf'), 'utf8');
  return { order: sdBootMenu(files).map((e) => e.fileName), chosen: sdBoot(files, conf).chosen };
}

/** bootctl and molt's model agree on order and default; returns bootctl's view as `file id left/done`. */
async function agreed(): Promise<string[]> {
  const list = await listed();
  const m = await model();
  assert.deepEqual(
    list.map((e) => basename(e.path)),
    m.order,
    'bootctl order = molt sd-boot model order',
  );
  assert.equal(await bootctlDefault(), m.chosen, 'bootctl default = molt sd-boot model choice');
  return list.map(
    (e) =>
      `${basename(e.path)} ${e.id} ${String(e.triesLeft ?? '-')}/${String(e.triesDone ?? '-')}`,
  );
}

before(async () => {
  await access(BOOTCTL).catch(() => {
    throw new Error(
      `bootctl is missing at ${BOOTCTL}: run scripts/setup.sh (extracts it from Debian's systemd-boot)`,
    );
  });
  ({ root, remove } = await bootloaderTestRoot());
  // bootloaderTestRoot put the kernels under esp/; move them onto the tmpfs ESP.
  await run('mv', [join(root, 'esp'), join(root, 'esp.src')]);
  await mkdir(join(root, 'esp'));
  await run('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'tmpfs', join(root, 'esp')]).catch(
    (error: unknown) => {
      throw new Error(`mount -t tmpfs failed (this test needs root): ${String(error)}`);
    },
  );
  mounted = true;
  await run('cp', ['-a', `${join(root, 'esp.src')}/.`, join(root, 'esp')]);
});

after(async () => {
  if (mounted) await run('umount', [join(root, 'esp')]);
  await remove();
});

describe('bootctl list over molt systemd-boot entries', () => {
  it('reports ids without counters, tries, order and default as molt intends, through upgrade, failure and rollback', async () => {
    const b = createSdBootBootloader(root);
    await b.writeEntry('A', testManifest('A', 1));
    await b.commit('A');
    await b.writeEntry('B', testManifest('B', 2));
    assert.deepEqual(await agreed(), [
      'molt-a.conf molt-a.conf -/-',
      'molt-b+0.conf molt-b.conf 0/-',
    ]);

    const [a] = await listed();
    assert.deepEqual(
      {
        version: a?.version,
        sortKey: a?.sortKey,
        options: a?.options,
        linux: a?.linux,
        initrd: a?.initrd,
      },
      {
        version: '1',
        sortKey: 'molt',
        options: 'molt.slot=A root=PARTLABEL=molt-a panic=10',
        linux: '/molt/a/vmlinuz',
        initrd: ['/molt/a/initrd.img'],
      },
    );

    await b.armBootOnce('B');
    assert.deepEqual(await agreed(), [
      'molt-b+1.conf molt-b.conf 1/-',
      'molt-a.conf molt-a.conf -/-',
    ]);
    assert.equal(await bootctlDefault(), 'molt-b+1.conf');

    // The trial boots (sd-boot renames it) and never commits: exhausted, sorted last, A is default again.
    assert.equal(
      await bootMachine(root, 'systemd-boot').then((r) => (r.ok ? r.slot : r.reason)),
      'B',
    );
    assert.deepEqual(await agreed(), [
      'molt-a.conf molt-a.conf -/-',
      'molt-b+0-1.conf molt-b.conf 0/1',
    ]);
    const view = await b.read();
    assert.deepEqual(
      view.entries.find((e) => e.slot === 'B'),
      { slot: 'B', state: 'bad', triesLeft: 0, triesDone: 1 },
    );

    // Retry, boot, commit: B is the plain, first, default entry.
    await b.armBootOnce('B');
    await bootMachine(root, 'systemd-boot');
    await b.commit('B');
    assert.deepEqual(await agreed(), [
      'molt-b.conf molt-b.conf -/-',
      'molt-a.conf molt-a.conf -/-',
    ]);

    // Manual rollback to the older A: its version is raised, so its trial sorts first.
    await b.armBootOnce('A');
    assert.deepEqual(await agreed(), [
      'molt-a+1.conf molt-a.conf 1/-',
      'molt-b.conf molt-b.conf -/-',
    ]);
    assert.equal((await listed())[0]?.version, '3');
    await bootMachine(root, 'systemd-boot');
    await b.commit('A');
    assert.deepEqual(await agreed(), [
      'molt-a.conf molt-a.conf -/-',
      'molt-b.conf molt-b.conf -/-',
    ]);
  });
});
