// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChallenges } from './challenge.ts';

describe('parseChallenges', () => {
  it('reads the Bearer challenge registry 2.8.2 sends', () => {
    const h =
      'Bearer realm="http://127.0.0.1:5097/token",service="test-registry",scope="repository:acme/installer:pull"';
    assert.deepEqual(parseChallenges(h), [
      {
        scheme: 'bearer',
        params: {
          realm: 'http://127.0.0.1:5097/token',
          service: 'test-registry',
          scope: 'repository:acme/installer:pull',
        },
      },
    ]);
  });

  it('keeps commas and escaped quotes inside quoted values, and reads several challenges', () => {
    const h =
      'Basic realm="a, \\"b\\"", Bearer realm="https://auth/token",scope="repository:x:pull,push repository:y:pull", error=insufficient_scope';
    const all = parseChallenges(h);
    const basic = all[0];
    const bearer = all[1];
    assert.deepEqual(basic, { scheme: 'basic', params: { realm: 'a, "b"' } });
    assert.equal(bearer?.params['scope'], 'repository:x:pull,push repository:y:pull');
    assert.equal(bearer.params['error'], 'insufficient_scope');
  });

  it('returns nothing for a missing or empty header', () => {
    assert.deepEqual(parseChallenges(null), []);
    assert.deepEqual(parseChallenges('  '), []);
  });
});
