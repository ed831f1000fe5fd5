// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectFailure, oneLine } from './connect-failure.ts';

const coded = (code: string, message: string): Error => Object.assign(new Error(message), { code });
const fetchFailed = (cause: unknown): Error => new TypeError('fetch failed', { cause });

describe('why a connection failed', () => {
  it('reads the code under `fetch failed` and says it in words', () => {
    assert.deepEqual(connectFailure(fetchFailed(coded('ECONNREFUSED', 'connect ECONNREFUSED'))), {
      code: 'ECONNREFUSED',
      text: 'connection refused: nothing listens there (ECONNREFUSED)',
    });
    assert.equal(
      connectFailure(fetchFailed(coded('ENOTFOUND', 'getaddrinfo ENOTFOUND x'))).text,
      'DNS: no such host (ENOTFOUND)',
    );
    assert.equal(
      connectFailure(fetchFailed(coded('UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error'))).text,
      'timed out connecting (UND_ERR_CONNECT_TIMEOUT)',
    );
  });

  it('takes the first of an AggregateError (one error per address tried)', () => {
    const all = new AggregateError([coded('EHOSTUNREACH', 'a'), coded('ECONNREFUSED', 'b')]);
    assert.equal(connectFailure(fetchFailed(all)).code, 'EHOSTUNREACH');
  });

  it('names a port fetch will not connect to; with no cause, says what there is', () => {
    assert.match(connectFailure(fetchFailed(new Error('bad port'))).text, /refuses .* port/);
    assert.equal(connectFailure(new TypeError('fetch failed')).text, 'fetch failed');
  });

  it('reads an OpenSSL message as its reason, on one line', () => {
    const raw =
      '402DC35A7D7F0000:error:0A00010B:SSL routines:tls_validate_record_header:wrong version number:../deps/openssl/openssl/ssl/record/methods/tlsany_meth.c:77:\n';
    assert.equal(oneLine(raw), 'wrong version number');
    assert.equal(
      connectFailure(fetchFailed(coded('ERR_SSL_WRONG_VERSION_NUMBER', raw))).text,
      'ERR_SSL_WRONG_VERSION_NUMBER: wrong version number',
    );
    assert.equal(oneLine('two\n  lines '), 'two lines');
  });
});
