// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LayerEntry } from './entries.ts';
import {
  caBundle,
  debianLayerEntries,
  MoltMain,
  moltLayerEntries,
  NodePath,
  nodeLayerEntries,
  NonRoot,
} from './rootfs.ts';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const file = (path: string, data = 'x'): LayerEntry => ({
  kind: 'file',
  path,
  mode: 0o644,
  data: text(data),
});
const dir = (path: string): LayerEntry => ({ kind: 'dir', path, mode: 0o755 });
const pem = (n: string): string => `-----BEGIN CERTIFICATE-----\n${n}\n-----END CERTIFICATE-----\n`;

/** A few entries as mmdebstrap's extract variant writes them. */
const debian: LayerEntry[] = [
  dir('dev/'),
  { kind: 'symlink', path: 'dev/fd', target: '/proc/self/fd' },
  dir('etc/'),
  dir('etc/apt/'),
  file('etc/apt/sources.list'),
  dir('lib64/'),
  {
    kind: 'symlink',
    path: 'lib64/ld-linux-x86-64.so.2',
    target: '/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2',
  },
  file('lib/x86_64-linux-gnu/libc.so.6'),
  file('usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30'),
  file('usr/share/ca-certificates/mozilla/B_Root.crt', pem('B')),
  file('usr/share/ca-certificates/mozilla/A_Root.crt', pem('A')),
  file('usr/share/doc/libc6/copyright'),
  file('usr/share/doc/libc6/changelog.Debian.gz'),
  file('usr/share/man/man1/openssl.1ssl.gz'),
  file('usr/share/locale/locale.alias'),
  file('usr/share/locale/de/LC_MESSAGES/libc.mo'),
  file('usr/share/zoneinfo/Europe/Berlin'),
  file('var/lib/dpkg/status'),
  file('var/cache/apt/pkgcache.bin'),
  file('var/log/apt/eipp.log.xz'),
];

describe('the operator image root file system', () => {
  const paths = new Map(debianLayerEntries(debian).map((e) => [e.path, e]));

  it('keeps the libraries, zones, locale.alias and copyright files of the Debian tree', () => {
    for (const p of [
      'lib/x86_64-linux-gnu/libc.so.6',
      'lib64/ld-linux-x86-64.so.2',
      'usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30',
      'usr/share/zoneinfo/Europe/Berlin',
      'usr/share/locale/locale.alias',
      'usr/share/doc/libc6/copyright',
      'dev/',
    ])
      assert.ok(paths.has(p), p);
  });

  it('leaves out device nodes, manuals, changelogs, translations and package-manager state', () => {
    for (const p of [
      'dev/fd',
      'etc/apt/sources.list',
      'usr/share/doc/libc6/changelog.Debian.gz',
      'usr/share/man/man1/openssl.1ssl.gz',
      'usr/share/locale/de/LC_MESSAGES/libc.mo',
      'var/lib/dpkg/status',
      'var/cache/apt/pkgcache.bin',
      'var/log/apt/eipp.log.xz',
    ])
      assert.ok(!paths.has(p), p);
  });

  it('has root and nonroot (65532) accounts, nonroot’s home, a sticky /tmp and the parents of all', () => {
    const passwd = paths.get('etc/passwd');
    assert.ok(passwd?.kind === 'file');
    assert.match(
      Buffer.from(passwd.data).toString(),
      /^nonroot:x:65532:65532:nonroot:\/home\/nonroot:/m,
    );
    const group = paths.get('etc/group');
    assert.ok(group?.kind === 'file');
    assert.match(Buffer.from(group.data).toString(), /^nonroot:x:65532:$/m);
    assert.deepEqual(paths.get(`${NonRoot.home}/`), {
      kind: 'dir',
      path: 'home/nonroot/',
      mode: 0o755,
      uid: 65532,
      gid: 65532,
    });
    assert.deepEqual(paths.get('tmp/'), { kind: 'dir', path: 'tmp/', mode: 0o1777 });
    for (const d of ['home/', 'etc/ssl/', 'etc/ssl/certs/', 'usr/', 'usr/share/zoneinfo/Europe/'])
      assert.equal(paths.get(d)?.kind, 'dir', d);
  });

  it('writes the CA bundle update-ca-certificates would: every Mozilla root, in name order', () => {
    const bundle = paths.get('etc/ssl/certs/ca-certificates.crt');
    assert.ok(bundle?.kind === 'file');
    assert.equal(Buffer.from(bundle.data).toString(), `${pem('A')}${pem('B')}`);
    assert.equal(caBundle([]).byteLength, 0);
  });

  it('puts Node at /usr/local/bin/node (0755), and molt with a `molt` command run by that Node', () => {
    const node = nodeLayerEntries(text('ELF'));
    assert.deepEqual(
      node.map((e) => e.path).sort(),
      ['usr/', 'usr/local/', 'usr/local/bin/', NodePath.slice(1)].sort(),
    );
    const binary = node.find((e) => e.path === 'usr/local/bin/node');
    assert.ok(binary?.kind === 'file');
    assert.equal(binary.mode, 0o755);
    const molt = new Map(
      moltLayerEntries([dir('usr/lib/molt/'), file('usr/lib/molt/dist/bin/molt.js')]).map((e) => [
        e.path,
        e,
      ]),
    );
    assert.ok(molt.has('usr/lib/molt/dist/bin/molt.js'));
    assert.equal(molt.get('usr/lib/')?.kind, 'dir');
    const command = molt.get('usr/local/bin/molt');
    assert.ok(command?.kind === 'file');
    assert.equal(command.mode, 0o755);
    const script = Buffer.from(command.data).toString();
    assert.ok(script.startsWith(`#!${NodePath}\n`));
    assert.ok(script.includes(JSON.stringify(MoltMain)));
  });
});
