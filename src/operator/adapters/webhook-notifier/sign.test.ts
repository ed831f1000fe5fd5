// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signature, signatureHeaders, verifySignature } from './sign.ts';

const secret = Buffer.from('shh');
const body = '{"hello":"world"}';

describe('webhook signatures', () => {
  it('are the HMAC-SHA256 of "<timestamp>.<body>" (cross-checked with openssl dgst -hmac)', () => {
    // printf '%s' '1700000000.{"hello":"world"}' | openssl dgst -sha256 -hmac shh
    assert.equal(
      signature(secret, 1_700_000_000, body),
      'sha256=153ce153c9aade6186c1055b6e8922ddbbc9460704faf5e20e04e433047a20d3',
    );
    assert.deepEqual(signatureHeaders(secret, body, 1_700_000_000_999), {
      'x-molt-timestamp': '1700000000',
      'x-molt-signature': 'sha256=153ce153c9aade6186c1055b6e8922ddbbc9460704faf5e20e04e433047a20d3',
    });
  });

  it('verify for the receiver: this body, this secret, a recent timestamp — nothing else', () => {
    const now = 1_700_000_000_000;
    const h = signatureHeaders(secret, body, now);
    const sent = { body, timestamp: h['x-molt-timestamp'], signature: h['x-molt-signature'] };
    assert.ok(verifySignature(secret, sent, now + 60_000));
    assert.ok(!verifySignature(secret, { ...sent, body: `${body} ` }, now), 'a changed body');
    assert.ok(!verifySignature(Buffer.from('other'), sent, now), 'another secret');
    assert.ok(!verifySignature(secret, sent, now + 301_000), 'a replay after five minutes');
    assert.ok(
      !verifySignature(secret, { ...sent, timestamp: '1700000060' }, now + 60_000),
      'a timestamp moved to look fresh',
    );
    assert.ok(!verifySignature(secret, { ...sent, signature: undefined }, now), 'unsigned');
    assert.ok(!verifySignature(secret, { ...sent, timestamp: '17e8' }, now), 'not a number');
    assert.ok(!verifySignature(secret, { ...sent, signature: 'sha256=00' }, now), 'too short');
  });
});
