// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { usage } from '../build/options.ts';
import { parseOperatorOptions, wantsOperator } from './options.ts';

const parse = (...argv: string[]) => parseOperatorOptions(['--operator', ...argv], {});
const rejects = (code: string, pattern: RegExp, ...argv: string[]): void => {
  assert.throws(
    () => parse(...argv),
    (e: unknown) => isMoltError(e) && e.code === code && pattern.test(e.message),
  );
};

describe('molt image build --operator flags', () => {
  it('is asked for by --operator, and documented in molt image build --help', () => {
    assert.equal(wantsOperator(['--operator', '--out', 'x']), true);
    assert.equal(wantsOperator(['--version', '1.0.0', '--out', 'x']), false);
    assert.match(usage, /molt image build --operator \(--out DIR \| --push REF\)/);
    for (const flag of ['--operator', '--push REF', '--insecure', '--tag TAG', '--revision SHA'])
      assert.ok(usage.includes(flag), flag);
    assert.equal(parse('--help'), null);
  });

  it('reads a layout directory and a push reference, the cache from the environment', () => {
    const o = parseOperatorOptions(
      ['--operator', '--out', 'img', '--push', '127.0.0.1:5000/molt/operator:dev', '--insecure'],
      { MOLT_IMAGE_CACHE: '/var/cache/molt' },
    );
    assert.ok(o);
    assert.equal(o.out, 'img');
    assert.deepEqual(o.push, {
      registry: '127.0.0.1:5000',
      repository: 'molt/operator',
      tag: 'dev',
    });
    assert.equal(o.insecure, true);
    assert.equal(o.cache, '/var/cache/molt');
    assert.equal(o.tag, undefined);
    const latest = parse('--push', 'registry.example.com/acme/molt-operator');
    assert.equal(latest?.push?.tag, 'latest');
    assert.equal(latest.out, undefined);
  });

  it('refuses a build with nowhere to go, and the flags of OS images', () => {
    rejects(ErrorCode.BadFlag, /needs --out DIR, --push REF or both/);
    rejects(
      ErrorCode.BadFlag,
      /--version is a flag of OS images/,
      '--out',
      'x',
      '--version',
      '1.0.0',
    );
    rejects(ErrorCode.BadFlag, /--kernel is a flag of OS images/, '--out', 'x', '--kernel=cloud');
    rejects(ErrorCode.BadFlag, /--overlay is a flag of OS images/, '--out', 'x', '--overlay', 'd');
    rejects(ErrorCode.BadFlag, /Unknown option '--bogus'/, '--out', 'x', '--bogus');
  });

  it('refuses bad references, tags, revisions, sources, and --insecure without --push', () => {
    rejects(
      ErrorCode.InvalidReference,
      /does not start with a registry host/,
      '--push',
      'molt/operator',
    );
    rejects(ErrorCode.InvalidReference, /is not a repository name/, '--push', 'r.io/Molt:1');
    rejects(ErrorCode.BadFlag, /names a digest/, '--push', `r.io/molt@sha256:${'a'.repeat(64)}`);
    rejects(ErrorCode.BadFlag, /--tag a\+b is not an image tag/, '--out', 'x', '--tag', 'a+b');
    rejects(
      ErrorCode.BadFlag,
      /--revision main is not a commit id/,
      '--out',
      'x',
      '--revision',
      'main',
    );
    rejects(ErrorCode.BadFlag, /--source nope is not a URL/, '--out', 'x', '--source', 'nope');
    rejects(ErrorCode.BadFlag, /--insecure applies to --push only/, '--out', 'x', '--insecure');
  });
});
