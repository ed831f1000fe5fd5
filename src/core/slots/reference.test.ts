// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../errors.ts';
import { parseImageReference, referenceTarget } from './reference.ts';

const d = `sha256:${'a'.repeat(64)}`;

describe('parseImageReference', () => {
  it('parses host, repository, tag and digest', () => {
    assert.deepEqual(parseImageReference('127.0.0.1:5000/acme/installer:1.2.0'), {
      registry: '127.0.0.1:5000',
      repository: 'acme/installer',
      tag: '1.2.0',
    });
    assert.deepEqual(parseImageReference(`ghcr.io/acme/installer@${d}`), {
      registry: 'ghcr.io',
      repository: 'acme/installer',
      digest: d,
    });
    assert.deepEqual(parseImageReference(`localhost/x:v1@${d}`), {
      registry: 'localhost',
      repository: 'x',
      tag: 'v1',
      digest: d,
    });
    assert.deepEqual(parseImageReference('registry.example.com/acme/installer'), {
      registry: 'registry.example.com',
      repository: 'acme/installer',
      tag: 'latest',
    });
    assert.deepEqual(parseImageReference('[::1]:5000/a:b'), {
      registry: '[::1]:5000',
      repository: 'a',
      tag: 'b',
    });
    assert.equal(referenceTarget(parseImageReference(`localhost/x:v1@${d}`)), d);
  });

  it('refuses references it cannot use with MOLT_INVALID_REFERENCE', () => {
    for (const ref of [
      '',
      ' ',
      'acme/installer:1',
      'installer',
      'host.io/Acme:1',
      'host.io/acme:1+2',
      'host.io/acme@sha256:abc',
      `host.io/acme@md5:${'a'.repeat(32)}`,
      'host.io//acme',
      'host.io/acme:',
      'http://host.io/acme:1',
      'bad_host.io/acme:1',
      'host.io:99999999/acme',
      `host.io/acme:${'t'.repeat(129)}`,
    ])
      assert.throws(
        () => parseImageReference(ref),
        (e: unknown) => isMoltError(e, ErrorCode.InvalidReference),
        ref,
      );
  });
});
