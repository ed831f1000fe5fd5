// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): an installer image's labels, its tar layer entries
// (the path check before a byte is written), image references, and slot.json / staged.json.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { accepted, fuzzJson, fuzzParameters, fuzzText, outcome } from '../../testkit/fuzz.ts';
import { ErrorCode } from '../errors.ts';
import { installerMetadata } from './labels.ts';
import { parseSlotManifest, parseStagedRecord } from './manifest.ts';
import { parseImageReference } from './reference.ts';
import { checkTarEntry } from './tar-entry.ts';

const digest = (c: string): string => `sha256:${c.repeat(64)}`;
const manifest = {
  schema: 1,
  slot: 'B',
  status: 'ready',
  imageRef: 'r.io/a:1',
  imageDigest: digest('1'),
  manifestDigest: digest('2'),
  version: '1.0.0',
  generation: 3,
  artifacts: { vmlinuz: { path: 'esp/molt/b/vmlinuz', size: 3, digest: digest('3') } },
  lab: { boot: 'ok', health: 'never' },
  operationId: 'op-1',
  writtenAt: '2026-11-22T10:00:00.000Z',
};
const staged = {
  schema: 1,
  slot: 'A',
  imageRef: 'r.io/a:1',
  imageDigest: digest('1'),
  manifestDigest: digest('2'),
  version: '1.0.0',
  artifacts: { 'rootfs.img': { size: 9, digest: digest('4'), layerDigest: digest('5') } },
  pulledAt: '2026-11-22T10:00:00.000Z',
};

describe('fuzz: installer images and slot records', () => {
  it('installerMetadata reads any labels into a version or throws MOLT_IMAGE_INVALID', () => {
    const key = fuzzText(
      ['org.opencontainers.image.version', 'dev.molt.lab.boot', 'dev.molt.lab.health'],
      40,
    );
    const value = fuzzText(['1.0.0', 'ok', 'fail', 'never'], 40);
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 4 }), (labels) => {
        const r = outcome(() => installerMetadata(labels), 'installerMetadata');
        if (!accepted(r, ErrorCode.ImageInvalid, ErrorCode.InvalidVersion)) return;
        assert.equal(typeof r.value.version, 'string');
      }),
      fuzzParameters(1_000),
    );
  });

  it('checkTarEntry admits only top-level artifact files and refuses the rest with a code', () => {
    const types = fc.constantFrom(
      'File',
      'OldFile',
      'ContiguousFile',
      'Directory',
      'SymbolicLink',
      'Link',
      'CharacterDevice',
      'FIFO',
      '',
    );
    const paths = fuzzText(
      ['vmlinuz', './rootfs.img', '../vmlinuz', '/etc/passwd', 'a/../cmdline', 'C:\\x', './'],
      60,
    );
    fc.assert(
      fc.property(paths, types, (path, type) => {
        const r = outcome(() => checkTarEntry({ path, type }), 'checkTarEntry');
        if (!accepted(r, ErrorCode.LayerUnsafePath, ErrorCode.ImageInvalid)) return;
        if (r.value === undefined) {
          assert.equal(type, 'Directory');
          return;
        }
        assert.ok(['vmlinuz', 'initrd.img', 'rootfs.img', 'cmdline'].includes(r.value));
        assert.ok(path === r.value || path === `./${r.value}`, `${path} landed as ${r.value}`);
      }),
      fuzzParameters(2_000),
    );
  });

  it('parseImageReference returns parts that rebuild a reference it reads the same', () => {
    const refs = [
      '127.0.0.1:5000/acme/os:1.0.0',
      `r.io/a/b@${digest('a')}`,
      'localhost/os:v1@' + digest('b'),
      'r.io/x',
    ];
    fc.assert(
      fc.property(fuzzText(refs, 160), (text) => {
        const r = outcome(() => parseImageReference(text), 'parseImageReference');
        if (!accepted(r, ErrorCode.InvalidReference)) return;
        const { registry, repository, tag, digest: d } = r.value;
        const again = `${registry}/${repository}${tag === undefined ? '' : `:${tag}`}${d === undefined ? '' : `@${d}`}`;
        assert.deepEqual(parseImageReference(again), r.value);
      }),
      fuzzParameters(2_000),
    );
  });

  it('slot.json and staged.json read back what they return, or throw MOLT_MACHINE_INVALID', () => {
    fc.assert(
      fc.property(fuzzJson([manifest, staged]), (json) => {
        const m = outcome(() => parseSlotManifest(json), 'parseSlotManifest');
        if (accepted(m, ErrorCode.MachineInvalid))
          assert.deepEqual(parseSlotManifest(JSON.parse(JSON.stringify(m.value))), m.value);
        const s = outcome(() => parseStagedRecord(json), 'parseStagedRecord');
        if (accepted(s, ErrorCode.MachineInvalid))
          assert.deepEqual(parseStagedRecord(JSON.parse(JSON.stringify(s.value))), s.value);
      }),
      fuzzParameters(1_000),
    );
  });
});
