// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makeRoom } from './bounded.ts';

describe('makeRoom', () => {
  it('drops the oldest entries of a Map until one more fits', () => {
    const m = new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    makeRoom(m, 2);
    assert.deepEqual([...m.keys()], ['c']);
  });

  it('leaves a Set under its bound alone, and empties it for a bound of 0', () => {
    const s = new Set(['a', 'b']);
    makeRoom(s, 3);
    assert.deepEqual([...s], ['a', 'b']);
    makeRoom(s, 0);
    assert.deepEqual([...s], []);
  });
});
