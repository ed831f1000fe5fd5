// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import {
  ArtifactMediaType,
  checkArtifactSet,
  checkTarEntry,
  MaxCmdlineBytes,
  planInstallerImage,
  TitleAnnotation,
  type LayerDescriptor,
} from './contract.ts';

const digest = (n: number): string => `sha256:${String(n).padStart(64, '0')}`;
const raw = (title: string, size = 10, n = size): LayerDescriptor => ({
  mediaType: ArtifactMediaType,
  digest: digest(n),
  size,
  annotations: { [TitleAnnotation]: title },
});
const tar = (size = 10): LayerDescriptor => ({
  mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
  digest: digest(size + 7),
  size,
});
const labels = { 'dev.molt.version': '1.2.0' };
const code =
  (c: string) =>
  (e: unknown): boolean =>
    isMoltError(e) && e.code === c;

describe('planInstallerImage', () => {
  it('plans one raw layer per artifact with the version and totals', () => {
    const plan = planInstallerImage({
      layers: [raw('vmlinuz', 5), raw('rootfs.img', 7), raw('cmdline', 1)],
      labels,
    });
    assert.equal(plan.version, '1.2.0');
    assert.equal(plan.totalBytes, 13);
    assert.equal(plan.lab, undefined);
    assert.deepEqual(
      plan.layers.map((l) => (l.kind === 'raw' ? l.artifact : 'tar')),
      ['vmlinuz', 'rootfs.img', 'cmdline'],
    );
  });

  it('accepts tar layers and defers the artifact set to unpacking', () => {
    const plan = planInstallerImage({ layers: [tar(), raw('vmlinuz')], labels });
    assert.deepEqual(
      plan.layers.map((l) => l.kind),
      ['tar', 'raw'],
    );
    assert.ok(plan.layers[0]?.kind === 'tar' && plan.layers[0].gzip);
  });

  it('reads lab labels, defaulting the one not given', () => {
    const plan = planInstallerImage({
      layers: [raw('vmlinuz'), raw('rootfs.img', 11)],
      labels: { ...labels, 'dev.molt.lab.health': 'never' },
    });
    assert.deepEqual(plan.lab, { boot: 'ok', health: 'never' });
  });

  it('falls back to org.opencontainers.image.version', () => {
    assert.equal(
      planInstallerImage({
        layers: [raw('vmlinuz'), raw('rootfs.img', 11)],
        labels: { 'org.opencontainers.image.version': 'v2.0.0' },
      }).version,
      'v2.0.0',
    );
  });

  it('refuses images that break the contract with MOLT_IMAGE_INVALID', () => {
    const ok = [raw('vmlinuz'), raw('rootfs.img', 11)];
    const bad: [LayerDescriptor[], Record<string, string>][] = [
      [[raw('rootfs.img')], labels],
      [[raw('vmlinuz')], labels],
      [[], labels],
      [[...ok, raw('vmlinuz', 12)], labels],
      [[...ok, raw('evil')], labels],
      [[...ok, { mediaType: ArtifactMediaType, digest: digest(3), size: 3 }], labels],
      [[...ok, { mediaType: 'application/octet-stream', digest: digest(3), size: 3 }], labels],
      [[...ok, { ...raw('cmdline'), digest: `sha512:${'a'.repeat(128)}` }], labels],
      [[...ok, { ...raw('cmdline'), size: -1 }], labels],
      [ok, {}],
      [ok, { 'dev.molt.version': 'latest' }],
      [ok, { ...labels, 'dev.molt.lab.boot': 'sometimes' }],
      [ok, { ...labels, 'dev.molt.lab.reboot': 'fail' }],
    ];
    for (const [layers, l] of bad)
      assert.throws(
        () => planInstallerImage({ layers, labels: l }),
        code(ErrorCode.ImageInvalid),
        JSON.stringify([layers, l]),
      );
  });

  it('refuses an image over the cap from its descriptors', () => {
    assert.throws(
      () =>
        planInstallerImage({
          layers: [raw('vmlinuz', 60), raw('rootfs.img', 50)],
          labels,
          maxBytes: 100,
        }),
      code(ErrorCode.ImageTooLarge),
    );
    assert.throws(
      () =>
        planInstallerImage({
          layers: [raw('vmlinuz', 1), { ...raw('rootfs.img'), size: 2 ** 31 }],
          labels,
        }),
      code(ErrorCode.ImageTooLarge),
    );
    assert.equal(
      planInstallerImage({
        layers: [raw('vmlinuz', 50), raw('rootfs.img', 50)],
        labels,
        maxBytes: 100,
      }).totalBytes,
      100,
    );
  });
});

describe('the cmdline artifact', () => {
  it('is refused from its descriptor when longer than the kernel command line', () => {
    const layers = (size: number) => [
      raw('vmlinuz', 5),
      raw('rootfs.img', 7),
      raw('cmdline', size),
    ];
    assert.equal(planInstallerImage({ layers: layers(MaxCmdlineBytes), labels }).layers.length, 3);
    assert.throws(
      () => planInstallerImage({ layers: layers(MaxCmdlineBytes + 1), labels }),
      code(ErrorCode.ImageInvalid),
    );
  });
});

describe('checkTarEntry and checkArtifactSet', () => {
  it('accepts top-level regular files on the allow-list and the root directory', () => {
    assert.equal(checkTarEntry({ path: 'vmlinuz', type: 'File' }), 'vmlinuz');
    assert.equal(checkTarEntry({ path: './rootfs.img', type: 'OldFile' }), 'rootfs.img');
    assert.equal(checkTarEntry({ path: './', type: 'Directory' }), undefined);
  });

  it('refuses escaping names, nesting, links and devices with MOLT_LAYER_UNSAFE_PATH', () => {
    for (const [path, type] of [
      ['../vmlinuz', 'File'],
      ['/vmlinuz', 'File'],
      ['boot/vmlinuz', 'File'],
      ['a/../../vmlinuz', 'File'],
      ['vmlinuz', 'SymbolicLink'],
      ['vmlinuz', 'Link'],
      ['vmlinuz', 'CharacterDevice'],
      ['vmlinuz', 'BlockDevice'],
      ['vmlinuz', 'FIFO'],
      ['boot/', 'Directory'],
      ['C:vmlinuz', 'File'],
      ['..\\vmlinuz', 'File'],
      ['.', 'File'],
    ])
      assert.throws(
        () => checkTarEntry({ path: path ?? '', type: type ?? '' }),
        code(ErrorCode.LayerUnsafePath),
        `${path} ${type}`,
      );
  });

  it('refuses unknown names with MOLT_IMAGE_INVALID', () => {
    assert.throws(
      () => checkTarEntry({ path: 'evil.sh', type: 'File' }),
      code(ErrorCode.ImageInvalid),
    );
    assert.throws(
      () => checkTarEntry({ path: '.wh.rootfs.img', type: 'File' }),
      code(ErrorCode.ImageInvalid),
    );
  });

  it('requires vmlinuz and rootfs.img exactly once', () => {
    checkArtifactSet(['rootfs.img', 'vmlinuz', 'initrd.img']);
    assert.throws(() => {
      checkArtifactSet(['vmlinuz']);
    }, code(ErrorCode.ImageInvalid));
    assert.throws(() => {
      checkArtifactSet(['vmlinuz', 'rootfs.img', 'vmlinuz']);
    }, code(ErrorCode.ImageInvalid));
  });
});
