// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { DefaultCmdline, parseBuildOptions } from './options.ts';

const parse = (...argv: string[]) => parseBuildOptions(argv, {});
const rejects = (code: string, pattern: RegExp, ...argv: string[]): void => {
  assert.throws(
    () => parse(...argv),
    (e: unknown) => isMoltError(e) && e.code === code && pattern.test(e.message),
  );
};

describe('molt image build flags', () => {
  it('reads the defaults: zstd, the amd64 kernel, pruned modules, the cache under .molt', () => {
    const o = parse('--version', '1.1.0', '--out', 'out');
    assert.ok(o);
    assert.equal(o.cmdline, DefaultCmdline);
    assert.deepEqual(o.compression, { kind: 'zstd', level: 9 });
    assert.equal(o.kernel, 'amd64');
    assert.equal(o.fullModules, false);
    assert.equal(o.cache, '.molt/images');
    assert.deepEqual(o.overlays, []);
  });

  it('keeps repeated overlays, units and packages in order, and the cache from the environment', () => {
    const o = parseBuildOptions(
      [
        '--version=2.0.0-rc.1',
        '--out=o',
        '--overlay=a',
        '--overlay=b',
        '--enable=x.service',
        '--package=htop',
        '--kernel=cloud',
        '--compression=xz',
        '--cmdline',
        '  console=ttyS0   quiet ',
      ],
      { MOLT_IMAGE_CACHE: '/var/cache/molt' },
    );
    assert.ok(o);
    assert.deepEqual(o.overlays, ['a', 'b']);
    assert.deepEqual(o.enable, ['x.service']);
    assert.deepEqual(o.packages, ['htop']);
    assert.equal(o.kernel, 'cloud');
    assert.deepEqual(o.compression, { kind: 'xz' });
    assert.equal(o.cmdline, 'console=ttyS0 quiet');
    assert.equal(o.cache, '/var/cache/molt');
  });

  it('takes the Kubernetes node runtime directory, and has none by default', () => {
    assert.equal(parse('--version=1.0.0', '--out=o')?.kubernetesNode, undefined);
    assert.equal(
      parse('--version=1.0.0', '--out=o', '--kubernetes-node', '/cache/node-v1')?.kubernetesNode,
      '/cache/node-v1',
    );
    assert.throws(
      () => parse('--version=1.0.0', '--out=o', '--kubernetes-node='),
      (e: unknown) =>
        isMoltError(e) &&
        e.code === ErrorCode.BadFlag &&
        /--kubernetes-node needs a directory/.test(e.message) &&
        /ensure-node-bins\.sh/.test(e.hint ?? ''),
    );
    rejects(
      ErrorCode.BadFlag,
      /argument missing/,
      '--version=1.0.0',
      '--out=o',
      '--kubernetes-node',
    );
  });

  it('reads zstd levels', () => {
    assert.deepEqual(parse('--version=1.0.0', '--out=o', '--compression=zstd:19')?.compression, {
      kind: 'zstd',
      level: 19,
    });
    for (const bad of ['zstd:0', 'zstd:23', 'zstd:', 'gzip'])
      rejects(
        ErrorCode.BadFlag,
        /--compression/,
        '--version=1.0.0',
        '--out=o',
        `--compression=${bad}`,
      );
  });

  it('answers --help with null', () => {
    assert.equal(parse('--help'), null);
  });

  it('refuses missing, unknown and malformed flags with stable codes', () => {
    rejects(ErrorCode.BadFlag, /--version is required/, '--out', 'o');
    rejects(ErrorCode.BadFlag, /--out is required/, '--version', '1.0.0');
    rejects(ErrorCode.InvalidVersion, /not a semver/, '--version', 'v1', '--out', 'o');
    rejects(ErrorCode.BadFlag, /Unknown option/, '--version', '1.0.0', '--out', 'o', '--nope');
    rejects(ErrorCode.BadFlag, /--kernel rt/, '--version', '1.0.0', '--out', 'o', '--kernel', 'rt');
    rejects(
      ErrorCode.BadFlag,
      /--compression lz4/,
      '--version=1.0.0',
      '--out=o',
      '--compression=lz4',
    );
    rejects(ErrorCode.BadFlag, /--enable/, '--version=1.0.0', '--out=o', '--enable=../x');
    rejects(ErrorCode.BadFlag, /--package/, '--version=1.0.0', '--out=o', '--package=a b');
  });

  it("refuses a cmdline that names the slot's root or its verity hash, is too long, or has odd characters", () => {
    const v = ['--version=1.0.0', '--out=o'];
    rejects(ErrorCode.BadFlag, /root=/, ...v, '--cmdline', 'quiet root=/dev/sda2');
    rejects(ErrorCode.BadFlag, /molt\.slot=/, ...v, '--cmdline', 'molt.slot=B');
    rejects(ErrorCode.BadFlag, /molt\.verity=/, ...v, '--cmdline', 'quiet molt.verity=00:4096');
    rejects(ErrorCode.BadFlag, /bytes/, ...v, '--cmdline', 'x'.repeat(2000));
    rejects(ErrorCode.BadFlag, /characters/, ...v, '--cmdline', 'init="/bin/sh"');
  });
});
