// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMoltError } from '../errors.ts';
import { checkKubeletSkew, type ApiServerVersion } from './kubelet-skew.ts';

const api = (version: string, emulatedVersion?: string): ApiServerVersion => ({
  version,
  ...(emulatedVersion !== undefined && { emulatedVersion }),
});

describe('the kubelet version skew policy', () => {
  const table: readonly [kubelet: string, server: ApiServerVersion, ok: boolean][] = [
    ['v1.35.4', api('v1.35.4'), true],
    ['v1.35.9', api('v1.35.1'), true], // a newer patch of the same minor
    ['v1.35.0', api('v1.35.9'), true],
    ['v1.34.2', api('v1.35.4'), true],
    ['v1.32.0', api('v1.35.4'), true], // three minors older
    ['v1.31.9', api('v1.35.4'), false], // four
    ['v1.36.0', api('v1.35.4'), false], // one minor newer
    ['v2.0.0', api('v1.35.4'), false],
    ['v1.35.4', api('v2.0.0'), false],
    ['v1.25.0', api('v1.28.0'), true], // three older, kubelet 1.25
    ['v1.24.9', api('v1.27.0'), false], // three older, kubelet before 1.25: two at most
    ['v1.24.9', api('v1.26.0'), true],
    ['v1.30.1-eks-1234', api('v1.31.2'), true], // vendor suffixes are ignored
    ['1.35.4', api('v1.35.4'), true], // without the v
    // An API server emulating the previous minor serves that minor.
    ['v1.36.3', api('v1.36.3', '1.35'), false],
    ['v1.35.4', api('v1.36.3', '1.35'), true],
    ['v1.32.0', api('v1.36.3', '1.35'), true],
    ['v1.36.3', api('v1.36.3', '1.36'), true], // emulating its own minor
  ];
  for (const [kubelet, server, ok] of table)
    it(`${ok ? 'allows' : 'refuses'} kubelet ${kubelet} against ${server.version}${server.emulatedVersion === undefined ? '' : ` emulating ${server.emulatedVersion}`}`, () => {
      assert.equal(checkKubeletSkew(kubelet, server).ok, ok);
    });

  it('names both versions and the allowed range when the kubelet is newer', () => {
    const v = checkKubeletSkew('v1.36.0', api('v1.35.4'));
    assert.deepEqual(v, {
      ok: false,
      code: 'MOLT_KUBELET_SKEW',
      reason:
        'kubelet v1.36.0 is newer than the API server v1.35.4: the version skew policy allows kubelets 1.32 to 1.35',
      hint: 'upgrade the control plane first (molt cluster kubernetes upgrade), then this release',
    });
  });

  it('says a kubelet is too old, and names the emulated minor the range is taken from', () => {
    const old = checkKubeletSkew('v1.31.9', api('v1.35.4'));
    assert.ok(!old.ok);
    assert.equal(
      old.reason,
      'kubelet v1.31.9 is too old for the API server v1.35.4: the version skew policy allows kubelets 1.32 to 1.35',
    );
    assert.match(old.hint, /newer kubelet first/);
    const emulating = checkKubeletSkew('v1.36.3', api('v1.36.3', '1.35'));
    assert.ok(!emulating.ok);
    assert.equal(
      emulating.reason,
      'kubelet v1.36.3 is newer than the API server v1.36.3 (emulating 1.35): the version skew policy allows kubelets 1.32 to 1.35',
    );
    const early = checkKubeletSkew('v1.24.9', api('v1.27.0'));
    assert.match(!early.ok ? early.reason : '', /allows kubelets 1\.25 to 1\.27$/);
  });

  it('throws MOLT_INVALID_VERSION for a kubelet version that is none', () => {
    assert.throws(
      () => checkKubeletSkew('latest', api('v1.35.4')),
      (e: unknown) => isMoltError(e, 'MOLT_INVALID_VERSION'),
    );
  });
});
