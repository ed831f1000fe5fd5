// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode, MoltError } from './errors.ts';
import { withoutUserInfo } from './redact.ts';

describe('withoutUserInfo', () => {
  it('drops the user and password of every URL in a text, and nothing else', () => {
    assert.equal(
      withoutUserInfo(
        'provider at https://molt:s3cret@provider.example:8443/v1 unreachable: ' +
          'Request cannot be constructed from a URL that includes credentials: http://token@10.0.0.1/x',
      ),
      'provider at https://provider.example:8443/v1 unreachable: ' +
        'Request cannot be constructed from a URL that includes credentials: http://10.0.0.1/x',
    );
    assert.equal(
      withoutUserInfo('https://u:p@ss@h/a@b'),
      'https://h/a@b',
      'a raw @ in the password',
    );
    assert.equal(
      withoutUserInfo('mail ops@example.com, see https://h/x?u=a@b'),
      'mail ops@example.com, see https://h/x?u=a@b',
    );
  });

  it('leaves no password behind, whatever it is made of', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9:@%._~!$&'()*+,;=-]{1,30}$/);
    fc.assert(
      fc.property(secret, fc.constantFrom('http', 'https', 'oci'), (s, scheme) => {
        const out = withoutUserInfo(`at ${scheme}://${s}@registry.example/v2/: refused`);
        assert.equal(out, `at ${scheme}://registry.example/v2/: refused`);
      }),
    );
  });

  it('is applied to every molt error’s message and hint', () => {
    const e = new MoltError(ErrorCode.ProviderUnreachable, 'provider at http://a:b@p/ down', {
      hint: 'check http://a:b@p/',
    });
    assert.equal(e.message, 'provider at http://p/ down');
    assert.equal(e.hint, 'check http://p/');
  });
});
