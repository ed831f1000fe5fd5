// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RemovedFlags, removedFlagsIn } from './removed-flags.ts';

describe('flags removed per minor', () => {
  it('refuses a flag the target minor removed, not one removed later', () => {
    const args = {
      'kube-controller-manager': {
        'pod-eviction-timeout': '1m',
        'node-monitor-grace-period': '40s',
      },
    };
    assert.deepEqual(removedFlagsIn(args, '1.27'), [
      { component: 'kube-controller-manager', flag: 'pod-eviction-timeout', removedIn: '1.27' },
    ]);
    assert.deepEqual(removedFlagsIn(args, '1.26'), []);
    assert.deepEqual(
      removedFlagsIn({ 'kube-apiserver': { 'insecure-port': '0' } }, '1.36').map((f) => f.flag),
      ['insecure-port'],
    );
  });

  it('applies a table a test gives (1.36 removals are found in 1.36, not 1.35)', () => {
    const table = { ...RemovedFlags, 'kube-scheduler': { 'made-up': '1.36' } };
    assert.equal(removedFlagsIn({ 'kube-scheduler': { 'made-up': 'x' } }, '1.36', table).length, 1);
    assert.equal(removedFlagsIn({ 'kube-scheduler': { 'made-up': 'x' } }, '1.35', table).length, 0);
  });
});
