// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isMoltError } from '../protocol/index.ts';
import { matchesLabels, parseLabelSelector } from './label-selector.ts';

const match = (selector: string, labels: Record<string, string>): boolean =>
  matchesLabels(parseLabelSelector(selector), labels);

describe('-l label selectors', () => {
  it('reads equality, inequality, existence and absence', () => {
    assert.deepEqual(parseLabelSelector(' zone = a ,tier!=edge,ssd,!gpu,rack==7'), [
      { op: 'equals', key: 'zone', value: 'a' },
      { op: 'notEquals', key: 'tier', value: 'edge' },
      { op: 'exists', key: 'ssd' },
      { op: 'notExists', key: 'gpu' },
      { op: 'equals', key: 'rack', value: '7' },
    ]);
  });

  it('needs every requirement; != also holds when the label is absent, as in Kubernetes', () => {
    assert.equal(match('zone=a,tier!=edge', { zone: 'a' }), true);
    assert.equal(match('zone=a,tier!=edge', { zone: 'a', tier: 'edge' }), false);
    assert.equal(match('zone=a', { zone: 'b' }), false);
    assert.equal(match('ssd', { ssd: '' }), true);
    assert.equal(match('!ssd', { ssd: '' }), false);
    assert.equal(match('molt.dev/pool=x', { 'molt.dev/pool': 'x' }), true);
  });

  it('refuses what it cannot read with MOLT_BAD_FLAG naming the selector', () => {
    for (const [selector, why] of [
      ['', /is empty/],
      ['zone=a=b', /"a=b" is not a label value/],
      ['!zone=a', /use key!=value/],
      ['a b=c', /"a b" is not a label key/],
    ] as const)
      assert.throws(
        () => parseLabelSelector(selector),
        (e: unknown) => isMoltError(e, 'MOLT_BAD_FLAG') && why.test(e.message),
        selector,
      );
  });
});
