// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mmdebstrapArgs } from './base.ts';
import { parseBuildOptions, type BuildOptions } from './options.ts';
import { baseRecipe, cacheName, digestOf, sourceLine } from './recipe.ts';
import { withImageVersion } from './tree.ts';

const options = (...extra: string[]): BuildOptions => {
  const o = parseBuildOptions(['--version=1.0.0', '--out=o', ...extra], {});
  assert.ok(o);
  return o;
};

describe('the base recipe and its digest', () => {
  it('names the same base for the same inputs, whatever the key order', () => {
    assert.equal(
      digestOf({ a: 1, b: [1, { c: 2, d: 3 }] }),
      digestOf({ b: [1, { d: 3, c: 2 }], a: 1 }),
    );
    assert.notEqual(digestOf({ a: 1 }), digestOf({ a: 2 }));
    assert.match(cacheName(digestOf('x')), /^[0-9a-f]{32}$/);
  });

  it('changes with the packages, the kernel, the modules and the files, not with the version', () => {
    const base = digestOf(baseRecipe(options(), 'sha256:f'));
    assert.equal(digestOf(baseRecipe(options('--version=9.9.9'), 'sha256:f')), base);
    for (const other of [
      baseRecipe(options('--package=htop'), 'sha256:f'),
      baseRecipe(options('--kernel=cloud'), 'sha256:f'),
      baseRecipe(options('--full-modules'), 'sha256:f'),
      baseRecipe(options('--kubernetes-node=/node'), 'sha256:f'),
      baseRecipe(options('--mirror=http://mirror.example/debian'), 'sha256:f'),
      baseRecipe(options(), 'sha256:g'),
    ])
      assert.notEqual(digestOf(other), base);
  });

  it('installs the kernel flavour, systemd, initramfs-tools and what Node links', () => {
    const r = baseRecipe(options(), 'sha256:f');
    for (const p of [
      'linux-image-amd64',
      'systemd-sysv',
      'initramfs-tools',
      'libstdc++6',
      'ca-certificates',
      'dosfstools',
    ])
      assert.ok(r.packages.includes(p), p);
    assert.ok(
      baseRecipe(options('--kernel=cloud'), '').packages.includes('linux-image-cloud-amd64'),
    );
    assert.deepEqual([...r.packages].sort(), r.packages, 'sorted, so the digest is stable');
  });

  it('adds runc and iptables for a Kubernetes node, whichever directory the binaries come from', () => {
    const plain = baseRecipe(options(), 'sha256:f');
    const node = baseRecipe(options('--kubernetes-node=/node'), 'sha256:f');
    assert.ok(!plain.packages.includes('runc') && !plain.packages.includes('iptables'));
    assert.deepEqual(
      node.packages.filter((p) => !plain.packages.includes(p)),
      ['iptables', 'runc'],
    );
    assert.deepEqual([...node.packages].sort(), node.packages);
    // The binaries are inputs of the image, not of the base: another build of them reuses it.
    assert.equal(
      digestOf(baseRecipe(options('--kubernetes-node=/other'), 'sha256:f')),
      digestOf(node),
    );
  });

  it('turns a mirror URL into a bookworm source line and keeps a deb line as it is', () => {
    assert.equal(sourceLine('http://m/debian'), 'deb http://m/debian bookworm main');
    assert.equal(
      sourceLine('deb http://m/debian bookworm main contrib'),
      'deb http://m/debian bookworm main contrib',
    );
  });

  it('asks mmdebstrap for a minbase tar with the hooks, quoting paths for the shell', () => {
    const args = mmdebstrapArgs(baseRecipe(options(), ''), "/cache/it's");
    assert.ok(args.includes('--variant=minbase'));
    assert.ok(args.some((a) => a.startsWith('--include=') && a.includes('linux-image-amd64')));
    assert.ok(
      args.some((a) => a.startsWith('--customize-hook=') && a.includes(`'/cache/it'\\''s' prune`)),
    );
    assert.equal(args.at(-4), "/cache/it's/rootfs.tar");
  });
});

describe('os-release', () => {
  it('names the release with IMAGE_ID and IMAGE_VERSION, replacing earlier ones', () => {
    const text = withImageVersion('ID=debian\nIMAGE_VERSION=0.9.0\n', '1.1.0');
    assert.equal(text, 'ID=debian\nIMAGE_ID=molt\nIMAGE_VERSION=1.1.0\n');
  });
});
