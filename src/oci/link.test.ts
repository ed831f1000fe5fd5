// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode, isMoltError } from '../core/errors.ts';
import { nextLink } from './link.ts';

const base = 'http://127.0.0.1:5000/v2/acme/installer/tags/list?n=2';

describe('nextLink', () => {
  it('resolves a relative next link against the request URL', () => {
    assert.equal(
      nextLink('</v2/acme/installer/tags/list?n=2&last=b>; rel="next"', base),
      'http://127.0.0.1:5000/v2/acme/installer/tags/list?n=2&last=b',
    );
  });

  it('picks rel=next among several links and keeps an opaque query verbatim', () => {
    const h =
      '<https://r.example/v2/x/tags/list?page=1>; rel="prev", <https://r.example/v2/x/tags/list?next_page=gAAAA%3D%3D&n=50>; rel=next';
    assert.equal(nextLink(h, base), 'https://r.example/v2/x/tags/list?next_page=gAAAA%3D%3D&n=50');
  });

  it('returns undefined without a next link', () => {
    assert.equal(nextLink(null, base), undefined);
    assert.equal(nextLink('</v2/x>; rel="prev"', base), undefined);
  });

  it('refuses a next link that is not a URL as MOLT_REGISTRY_PROTOCOL', () => {
    // Found by oci.fuzz.test.ts: `new URL` threw a TypeError out of the tag listing.
    for (const h of ['<https:\u0000//r.io/v2/x>; rel=next', '<http://[::1>; rel="next"']) {
      assert.throws(
        () => nextLink(h, base),
        (e) => isMoltError(e, ErrorCode.RegistryProtocol),
      );
    }
  });

  it('round-trips any last= value through a Link header', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,40}$/), (tag) => {
        const link = `</v2/a/tags/list?n=2&last=${encodeURIComponent(tag)}>; rel="next"`;
        assert.equal(new URL(nextLink(link, base) ?? '').searchParams.get('last'), tag);
      }),
    );
  });
});
