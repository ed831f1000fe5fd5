// SPDX-License-Identifier: Apache-2.0
// molt's grubenv codec and GRUB back-end against Debian's own tools, both ways: grub-editenv
// (create/set/unset/list, escaping, a full block, a bad signature), grub-reboot and
// grub-set-default (with --boot-directory, so they edit a temp dir, never /boot).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import {
  createGrubenv,
  encodeGrubenv,
  grubenvEntries,
  grubenvSet,
  grubenvUnset,
  parseGrubenv,
  type Grubenv,
} from '../../src/core/boot/grubenv.ts';
import { ErrorCode, isMoltError } from '../../src/core/errors.ts';
import { createGrubBootloader } from '../../src/agent/adapters/grub/index.ts';
import { bootloaderTestRoot, testManifest } from '../../src/testkit/bootloader-conformance.ts';

const run = promisify(execFile);
const TOOLS = ['grub-editenv', 'grub-reboot', 'grub-set-default'];

async function editenv(
  ...args: string[]
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run('grub-editenv', args, { encoding: 'latin1' });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

let dir = '';
const file = (name: string): string => join(dir, name);
const bytes = async (name: string): Promise<Buffer> => readFile(file(name));
const listing = (env: Grubenv): string =>
  grubenvEntries(env)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');

before(async () => {
  for (const tool of TOOLS) {
    await run('sh', ['-c', `command -v ${tool}`]).catch(() => {
      throw new Error(
        `${tool} is missing: run scripts/setup.sh (Debian grub-common, grub2-common)`,
      );
    });
  }
  dir = await mkdtemp(join(tmpdir(), 'molt-grubenv-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('grubenv: grub-editenv → molt', () => {
  it('reads create/set/unset output and replays it to the same bytes', async () => {
    await editenv(file('a'), 'create');
    await editenv(
      file('a'),
      'set',
      'saved_entry=molt-a',
      'next_entry=molt-b',
      'weird=x\\y\nz',
      'eq=1=2',
    );
    await editenv(file('a'), 'set', 'next_entry=', 'saved_entry=a-much-longer-value-than-before');
    await editenv(file('a'), 'unset', 'weird');
    const env = parseGrubenv(await bytes('a'));
    assert.deepEqual(grubenvEntries(env), [
      ['saved_entry', 'a-much-longer-value-than-before'],
      ['next_entry', ''],
      ['eq', '1=2'],
    ]);
    let mine = grubenvSet(
      grubenvSet(createGrubenv(), 'saved_entry', 'molt-a'),
      'next_entry',
      'molt-b',
    );
    mine = grubenvSet(grubenvSet(mine, 'weird', 'x\\y\nz'), 'eq', '1=2');
    mine = grubenvSet(
      grubenvSet(mine, 'next_entry', ''),
      'saved_entry',
      'a-much-longer-value-than-before',
    );
    assert.deepEqual(Buffer.from(encodeGrubenv(grubenvUnset(mine, 'weird'))), await bytes('a'));
  });

  it('fills the block to the same last byte, and both refuse one byte more', async () => {
    await editenv(file('full'), 'create');
    const free = 1024 - createGrubenv().block.search(/#+$/);
    const fits = 'v'.repeat(free - 'x=\n'.length);
    assert.equal((await editenv(file('full'), 'set', `x=${fits}`)).code, 0);
    assert.deepEqual(
      Buffer.from(encodeGrubenv(grubenvSet(createGrubenv(), 'x', fits))),
      await bytes('full'),
    );
    await editenv(file('over'), 'create');
    const over = await editenv(file('over'), 'set', `x=${fits}v`);
    assert.equal(over.code, 1);
    assert.match(over.stderr, /environment block too small/);
    assert.throws(
      () => grubenvSet(createGrubenv(), 'x', `${fits}v`),
      /environment block too small/,
    );
  });

  it('both refuse a block without the signature', async () => {
    await writeFile(file('bad'), `# GRUB Environment Blocx\n${'#'.repeat(999)}`);
    const r = await editenv(file('bad'), 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /invalid environment block/);
    const bad = new Uint8Array(await bytes('bad'));
    assert.throws(
      () => parseGrubenv(bad),
      (e) => isMoltError(e, ErrorCode.BootloaderInvalid),
    );
  });
});

describe('grubenv: molt → grub-editenv', () => {
  it('lists what molt wrote, with escapes undone, and edits it in place', async () => {
    let env = grubenvSet(grubenvSet(createGrubenv(), 'saved_entry', 'molt-a'), 'weird', 'a\\b\nc');
    env = grubenvSet(grubenvSet(env, 'next_entry', 'molt-b'), 'bytes', '\u00e9\u00ff');
    await writeFile(file('m'), encodeGrubenv(env));
    assert.equal((await editenv(file('m'), 'list')).stdout, listing(env));
    await editenv(file('m'), 'unset', 'weird');
    await editenv(file('m'), 'set', 'next_entry=');
    const back = parseGrubenv(await bytes('m'));
    assert.deepEqual(
      Buffer.from(encodeGrubenv(back)),
      Buffer.from(encodeGrubenv(grubenvSet(grubenvUnset(env, 'weird'), 'next_entry', ''))),
    );
  });
});

describe('GRUB back-end and grub-reboot / grub-set-default', () => {
  it('arms and commits with the same bytes the GRUB scripts write (prev_saved_entry included)', async () => {
    const { root, remove } = await bootloaderTestRoot();
    try {
      const b = createGrubBootloader(root);
      await b.writeEntry('A', testManifest('A', 1));
      await b.writeEntry('B', testManifest('B', 2));
      await b.commit('A');
      const envPath = join(root, 'esp', 'grub', 'grubenv');
      await run('grub-editenv', [envPath, 'set', 'prev_saved_entry=molt-b', 'other=kept']);
      const copy = join(dir, 'copy');
      await copyFile(envPath, join(dir, 'start'));
      await b.armBootOnce('A');
      await run('mkdir', ['-p', join(copy, 'grub')]);
      await copyFile(join(dir, 'start'), join(copy, 'grub', 'grubenv'));
      await run('grub-reboot', [`--boot-directory=${copy}`, 'molt-a']);
      assert.deepEqual(await readFile(envPath), await readFile(join(copy, 'grub', 'grubenv')));
      await b.commit('B');
      await run('grub-set-default', [`--boot-directory=${copy}`, 'molt-b']);
      assert.deepEqual(await readFile(envPath), await readFile(join(copy, 'grub', 'grubenv')));
    } finally {
      await remove();
    }
  });

  it('reads the state grub-reboot and grub-set-default leave', async () => {
    const { root, remove } = await bootloaderTestRoot();
    try {
      const b = createGrubBootloader(root);
      await b.writeEntry('A', testManifest('A', 1));
      await b.writeEntry('B', testManifest('B', 2));
      await run('grub-set-default', [`--boot-directory=${join(root, 'esp')}`, 'molt-b']);
      assert.deepEqual(await b.read(), {
        bootloader: 'grub',
        committed: 'B',
        oneShot: null,
        entries: [
          { slot: 'A', state: 'bootable' },
          { slot: 'B', state: 'committed' },
        ],
      });
      await run('grub-reboot', [`--boot-directory=${join(root, 'esp')}`, 'molt-a']);
      assert.deepEqual(await b.read(), {
        bootloader: 'grub',
        committed: 'B',
        oneShot: 'A',
        entries: [
          { slot: 'A', state: 'trial' },
          { slot: 'B', state: 'committed' },
        ],
      });
      await b.disarmBootOnce();
      assert.equal((await b.read()).oneShot, null);
      assert.equal(
        (await run('grub-editenv', [join(root, 'esp', 'grub', 'grubenv'), 'list'])).stdout,
        'molt_a=ok\nmolt_a_version=1.1.0\nmolt_b=ok\nmolt_b_version=1.2.0\nsaved_entry=molt-b\n',
      );
    } finally {
      await remove();
    }
  });
});
