// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { guestAddress, podRoutes } from './vm-node.ts';

describe('VM nodes on the lab bridge', () => {
  it('route each other VM’s pod subnet through that VM’s bridge address, never their own', () => {
    const addresses = ['10.231.3.11', '10.231.3.12', '10.231.3.13'];
    assert.deepEqual(podRoutes(addresses, 2), [
      { to: '10.244.1.0/24', via: '10.231.3.11' },
      { to: '10.244.3.0/24', via: '10.231.3.13' },
    ]);
    assert.deepEqual(podRoutes(['10.231.3.11'], 1), [], 'a lone VM has no one to route to');
  });

  it('reach the host’s loopback at 10.0.2.2, and a bridge address as it is', () => {
    assert.equal(guestAddress('127.0.0.1:5000'), '10.0.2.2:5000');
    assert.equal(guestAddress('10.231.3.1:5000'), '10.231.3.1:5000');
  });
});
