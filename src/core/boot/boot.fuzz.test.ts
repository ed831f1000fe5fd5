// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): the grubenv block, grub.cfg as GRUB (the lab firmware)
// reads it, systemd-boot entry files, their names and loader.conf, and an image's kernel cmdline.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  accepted,
  anyBytes,
  fuzzParameters,
  fuzzText,
  mutatedText,
  outcome,
} from '../../testkit/fuzz.ts';
import { ErrorCode } from '../errors.ts';
import type { SlotManifest } from '../slots/slot.ts';
import { parseBlsEntry, parseBlsFileName, parseLoaderConf, renderBlsEntry } from './bls.ts';
import { binaryToBytes, bytesToBinary } from './bytes.ts';
import { grubBoot, sdBoot, sdBootGlob } from './firmware.ts';
import { GrubCfg, parseGrubEntry, renderGrubEntry } from './grub-cfg.ts';
import { encodeGrubenv, grubenvEntries, parseGrubenv } from './grubenv.ts';
import { slotBootEntry } from './slot-entry.ts';

const golden = ['create', 'set', 'escaped', 'edited'].map((name) =>
  bytesToBinary(readFileSync(new URL(`testdata/${name}.grubenv`, import.meta.url))),
);
const grubEntries = [
  { id: 'molt-a', title: "molt 1 (slot A) it's", linux: '/molt/a/vmlinuz', options: 'panic=10' },
  { id: 'molt-b', title: 'molt 2', linux: '/molt/b/vmlinuz', options: 'x', initrd: '/molt/b/i' },
].map(renderGrubEntry);
const entry = renderBlsEntry({
  title: 'molt 1.0 (slot A)',
  version: '3',
  sortKey: 'molt',
  linux: '/molt/a/vmlinuz',
  initrd: '/molt/a/initrd.img',
  options: 'molt.slot=A panic=10',
});
const fileNames = ['molt-a.conf', 'molt-b+3.conf', 'molt-b+0-3.conf', 'auto-x.conf', '.h.conf'];
const loaderConfs = [
  'default molt-*\ntimeout 0\n',
  'default "MOLT-?.conf"\n',
  'default molt-[ab]*',
];

/** A grubenv block: random bytes, or a golden block with byte-level edits (same encoding). */
const grubenvBytes = fc.oneof(
  anyBytes(1100),
  mutatedText(golden, 6).map((text) =>
    binaryToBytes(text.replace(/[^\0-\xff]/g, (c) => String.fromCharCode(c.charCodeAt(0) & 0xff))),
  ),
);

describe('fuzz: bootloader files', () => {
  it('parseGrubenv takes a block back byte for byte or throws MOLT_BOOTLOADER_INVALID', () => {
    fc.assert(
      fc.property(grubenvBytes, fc.boolean(), (bytes, anySize) => {
        const r = outcome(() => parseGrubenv(bytes, { anySize }));
        if (!accepted(r, ErrorCode.BootloaderInvalid)) return;
        assert.deepEqual(encodeGrubenv(r.value), bytes);
        assert.ok(outcome(() => grubenvEntries(r.value)).ok);
      }),
      fuzzParameters(1_000),
    );
  });

  it('grubBoot (the lab firmware) reads any grubenv, grub.cfg and entry files, or throws a MoltError', () => {
    fc.assert(
      fc.property(
        fc.option(grubenvBytes, { nil: undefined }),
        fuzzText([GrubCfg], 400),
        fuzzText(grubEntries, 200),
        (env, text, entryText) => {
          const esp = { exists: () => true, read: () => entryText };
          outcome(() => grubBoot(env, text, esp), 'grubBoot');
          const parsed = outcome(() => parseGrubEntry('molt-a', entryText), 'parseGrubEntry');
          // What molt would write again reads back the same.
          if (parsed.ok)
            assert.deepEqual(parseGrubEntry('molt-a', renderGrubEntry(parsed.value)), parsed.value);
        },
      ),
      fuzzParameters(1_000),
    );
  });

  it('systemd-boot entries, names and loader.conf are read (the lab firmware boots one) without a throw', () => {
    const file = fc.record({ fileName: fuzzText(fileNames, 40), body: fuzzText([entry], 300) });
    fc.assert(
      fc.property(fc.array(file, { maxLength: 3 }), fuzzText(loaderConfs, 80), (files, conf) => {
        for (const f of files) {
          const name = outcome(() => parseBlsFileName(f.fileName)).ok;
          assert.ok(name && outcome(() => parseBlsEntry(f.body)).ok);
        }
        assert.ok(outcome(() => parseLoaderConf(conf)).ok);
        const choice = outcome(() => sdBoot(files, conf), 'sdBoot');
        assert.ok(choice.ok);
        if (choice.value.chosen !== undefined)
          assert.ok(files.some((f) => f.fileName === choice.value.chosen));
      }),
      fuzzParameters(1_000),
    );
  });

  it('sdBootGlob answers any pattern and id at once (no backtracking blow-up)', () => {
    const pattern = fc.oneof(
      fuzzText(['molt-*', 'MOLT-?.conf', 'molt-[a-b]*.conf'], 80),
      fc.string({ unit: fc.constantFrom('*', 'a', '?', '[', ']', '-', 'b'), maxLength: 80 }),
    );
    const id = fc.oneof(
      fuzzText(fileNames, 120),
      fc.string({ unit: fc.constantFrom('a', 'b'), maxLength: 250 }),
    );
    fc.assert(
      fc.property(pattern, id, (p, s) => {
        const r = outcome(() => sdBootGlob(p, s), 'sdBootGlob');
        assert.ok(r.ok);
        if (!/[*?[\]]/.test(p)) assert.equal(r.value, p.toLowerCase() === s.toLowerCase());
      }),
      fuzzParameters(1_000),
    );
  });

  it("an image's cmdline becomes a one-line entry or MOLT_IMAGE_INVALID", () => {
    const manifest = {
      version: '1.0.0',
      generation: 2,
      artifacts: {
        vmlinuz: { path: 'esp/molt/a/vmlinuz' },
        'initrd.img': { path: 'esp/molt/a/initrd.img' },
      },
    } as unknown as SlotManifest;
    fc.assert(
      fc.property(fuzzText(['console=ttyS0,115200 quiet', 'root=/dev/vda2 ro'], 200), (cmdline) => {
        const r = outcome(() => slotBootEntry('A', manifest, cmdline), 'slotBootEntry');
        if (!accepted(r, ErrorCode.ImageInvalid)) return;
        assert.doesNotMatch(r.value.options, /[\n\r\0"'$;\\#{}]/);
        assert.ok(outcome(() => renderGrubEntry(r.value)).ok);
      }),
      fuzzParameters(1_000),
    );
  });
});
