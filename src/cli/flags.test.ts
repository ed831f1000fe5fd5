// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseLayerSpec } from './commands/dev/publish.ts';
import { registryHost } from './registry-flags.ts';
import { holdForFlag } from './flags.ts';

describe('--layer file[:mediaType]', () => {
  it('splits a media type off the end', () => {
    assert.deepEqual(parseLayerSpec('rootfs.tar:application/vnd.oci.image.layer.v1.tar+gzip'), {
      path: 'rootfs.tar',
      mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
    });
  });

  it('keeps paths that contain a colon whole', () => {
    assert.deepEqual(parseLayerSpec('build:2026/kernel'), {
      path: 'build:2026/kernel',
      mediaType: 'application/vnd.oci.image.layer.v1.tar',
    });
    assert.deepEqual(parseLayerSpec('a:b/c.tar:text/plain'), {
      path: 'a:b/c.tar',
      mediaType: 'text/plain',
    });
  });

  it('uses the default media type for a bare path or an empty suffix', () => {
    assert.equal(parseLayerSpec('kernel').mediaType, 'application/vnd.oci.image.layer.v1.tar');
    assert.deepEqual(parseLayerSpec('kernel:'), {
      path: 'kernel',
      mediaType: 'application/vnd.oci.image.layer.v1.tar',
    });
  });
});

describe('registryHost', () => {
  it('strips a scheme and trailing slashes, so signed references name host/repository', () => {
    assert.equal(registryHost('https://reg.example:5000/'), 'reg.example:5000');
    assert.equal(registryHost('127.0.0.1:5000'), '127.0.0.1:5000');
  });
});

describe('--for of a hold', () => {
  const message = (v: string): string => holdForFlag.safeParse(v).error?.issues[0]?.message ?? '';
  it('takes a duration longer than 0', () => {
    assert.equal(holdForFlag.safeParse('90m').success, true);
  });
  it('calls a typo no duration, and a zero one a hold of no time', () => {
    assert.equal(message('2x'), '"2x" is not a duration (e.g. 30m, 2h, 1d)');
    assert.match(message('0s'), /^"0s" holds for no time: give a duration longer than 0/);
    assert.doesNotMatch(message('0s'), /not a duration/);
  });
});
