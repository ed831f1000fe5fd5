// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import { grubBoot, type GrubEsp } from './firmware.ts';
import {
  GrubCfg,
  grubEntryNumber,
  parseGrubEntry,
  renderGrubEntry,
  type GrubMenuEntry,
} from './grub-cfg.ts';
import { createGrubenv, encodeGrubenv, grubenvGet, grubenvSet, parseGrubenv } from './grubenv.ts';

const A: GrubMenuEntry = {
  id: 'molt-a',
  title: "molt 1.0 (slot A) it's",
  linux: '/molt/a/vmlinuz',
  options: 'molt.slot=A panic=10',
  initrd: '/molt/a/initrd.img',
};
const B: GrubMenuEntry = {
  id: 'molt-b',
  title: 'molt 2.0 (slot B)',
  linux: '/molt/b/vmlinuz',
  options: 'molt.slot=B panic=10 console=ttyS0,115200',
};
const cfg = GrubCfg;

/** An ESP with both slots' entry files and kernels, minus the paths `missing` matches. */
function esp(missing: (path: string) => boolean = () => false): GrubEsp {
  const files = new Map<string, string>([
    ['/molt/a/grub.cfg', renderGrubEntry(A)],
    ['/molt/b/grub.cfg', renderGrubEntry(B)],
    ['/molt/a/vmlinuz', ''],
    ['/molt/a/initrd.img', ''],
    ['/molt/b/vmlinuz', ''],
  ]);
  return {
    exists: (p) => files.has(p) && !missing(p),
    read: (p) => (missing(p) ? undefined : files.get(p)),
  };
}

/** A grubenv block letting both slots boot, plus `vars`. */
function env(vars: Record<string, string>): Uint8Array {
  let e = grubenvSet(grubenvSet(createGrubenv(), 'molt_a', 'ok'), 'molt_b', 'ok');
  for (const [k, v] of Object.entries(vars)) e = grubenvSet(e, k, v);
  return encodeGrubenv(e);
}

describe('GRUB files', () => {
  it('grub.cfg: the 00_header logic, numeric fallbacks, and a menu entry per slot that grubenv lets boot', () => {
    assert.match(cfg, /save_env next_entry\n/);
    assert.match(cfg, /if \[ "\$\{saved_entry\}" = molt-b \]; then set fallback=1; fi/);
    assert.match(
      cfg,
      /if \[ "\$\{molt_b\}" = ok \]; then\n {2}menuentry "molt \$\{molt_b_version\} \(slot B\)" --id molt-b \{\n {4}source \/molt\/b\/grub\.cfg\n/,
    );
  });

  it('an entry file parses back to what it renders', () => {
    assert.equal(
      renderGrubEntry(A),
      "# molt 1.0 (slot A) it's\nlinux /molt/a/vmlinuz molt.slot=A panic=10\ninitrd /molt/a/initrd.img\n",
    );
    assert.deepEqual(parseGrubEntry('molt-a', renderGrubEntry(A)), A);
    assert.deepEqual(parseGrubEntry('molt-b', renderGrubEntry(B)), B);
  });

  it('refuses foreign files and options GRUB would interpret', () => {
    const invalid = (e: unknown): boolean => isMoltError(e, ErrorCode.BootloaderInvalid);
    assert.throws(() => grubBoot(env({}), 'set default=0\n', esp()), invalid);
    assert.throws(() => grubBoot(env({}), `${cfg}insmod evil\n`, esp()), invalid);
    assert.throws(() => parseGrubEntry('molt-a', `${renderGrubEntry(A)}insmod evil\n`), invalid);
    assert.throws(() => parseGrubEntry('molt-a', 'linux /molt/a/vmlinuz x\n'), invalid);
    assert.throws(() => renderGrubEntry({ ...A, options: 'x=$(reboot)' }), invalid);
    assert.throws(() => renderGrubEntry({ ...A, options: 'a;b' }), invalid);
  });

  it('matches default values like get_entry_number: number, title or id', () => {
    assert.equal(grubEntryNumber([A, B], '1'), 1);
    assert.equal(grubEntryNumber([A, B], 'molt 2.0 (slot B)'), 1);
    assert.equal(grubEntryNumber([A, B], 'molt-a'), 0);
    assert.equal(grubEntryNumber([A, B], 'gone'), -1);
  });
});

describe('grubBoot', () => {
  it('boots saved_entry and writes nothing', () => {
    const before = env({ saved_entry: 'molt-b' });
    const r = grubBoot(before, cfg, esp());
    assert.equal(r.entryId, 'molt-b');
    assert.equal(r.cmdline, 'BOOT_IMAGE=/molt/b/vmlinuz molt.slot=B panic=10 console=ttyS0,115200');
    assert.equal(r.grubenvChanged, false);
    assert.deepEqual(r.newGrubenv, before);
  });

  it('consumes next_entry in place: boot-once, then back to saved_entry', () => {
    const first = grubBoot(env({ saved_entry: 'molt-a', next_entry: 'molt-b' }), cfg, esp());
    assert.equal(first.entryId, 'molt-b');
    assert.equal(first.bootOnce, true);
    assert.ok(first.newGrubenv && first.grubenvChanged);
    assert.equal(first.newGrubenv.length, 1024);
    const after = parseGrubenv(first.newGrubenv);
    assert.equal(grubenvGet(after, 'next_entry'), '');
    assert.equal(
      after.block.indexOf('next_entry='),
      parseGrubenv(env({ saved_entry: 'molt-a', next_entry: 'molt-b' })).block.indexOf(
        'next_entry=',
      ),
    );
    const second = grubBoot(first.newGrubenv, cfg, esp());
    assert.equal(second.entryId, 'molt-a');
    assert.equal(second.grubenvChanged, false);
  });

  it('falls back to the committed entry when the trial kernel is missing', () => {
    const r = grubBoot(
      env({ saved_entry: 'molt-a', next_entry: 'molt-b' }),
      cfg,
      esp((p) => p.startsWith('/molt/b/')),
    );
    assert.equal(r.entryId, 'molt-a');
    assert.equal(r.fellBack, true);
    assert.equal(grubenvGet(parseGrubenv(r.newGrubenv ?? new Uint8Array()), 'next_entry'), '');
  });

  it('boots entry 0 for an unknown id, and nothing when default and fallback both fail', () => {
    assert.equal(grubBoot(env({ saved_entry: 'molt-z' }), cfg, esp()).entryId, 'molt-a');
    assert.equal(grubBoot(env({ molt_a: '' }), cfg, esp()).entryId, 'molt-b');
    const none = grubBoot(
      env({ saved_entry: 'molt-a' }),
      cfg,
      esp(() => true),
    );
    assert.equal(none.entryId, undefined);
    assert.match(none.errors.join('\n'), /both default and fallback/);
  });

  it('restores prev_saved_entry like 00_header, and loads nothing from an invalid or missing block', () => {
    const r = grubBoot(env({ saved_entry: 'molt-b', prev_saved_entry: 'molt-a' }), cfg, esp());
    assert.equal(r.entryId, 'molt-b');
    const after = parseGrubenv(r.newGrubenv ?? new Uint8Array());
    assert.equal(grubenvGet(after, 'saved_entry'), 'molt-a');
    assert.equal(grubenvGet(after, 'prev_saved_entry'), '');
    const bad = grubBoot(new Uint8Array(1024), cfg, esp());
    assert.equal(bad.entryId, 'molt-a', 'no block: both slots are offered, entry 0 boots');
    assert.equal(bad.newGrubenv, undefined);
    assert.match(bad.errors.join(), /invalid environment block/);
    assert.equal(grubBoot(undefined, cfg, esp()).entryId, 'molt-a');
    const onlyB = env({ molt_a: '', saved_entry: 'molt-a' });
    assert.equal(grubBoot(onlyB, cfg, esp()).entryId, 'molt-b', 'a slot not allowed is not listed');
  });
});
