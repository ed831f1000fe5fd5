// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detectMovedTags } from './rebuilds.ts';

const map = (entries: Record<string, string>): Map<string, string> =>
  new Map(Object.entries(entries));

describe('detectMovedTags', () => {
  it('reports nothing when no tag changed digest', () => {
    const tags = map({ '1.8.0': 'sha256:a', '1.8.0-rev1': 'sha256:a' });
    assert.deepEqual(detectMovedTags(tags, tags), []);
  });

  it('reads a short tag moving to a newer revision as a normal advance', () => {
    const before = map({ '1.8.0': 'sha256:a', '1.8.0-rev1': 'sha256:a' });
    const after = map({ '1.8.0': 'sha256:b', '1.8.0-rev1': 'sha256:a', '1.8.0-rev2': 'sha256:b' });
    assert.deepEqual(detectMovedTags(before, after), [
      { tag: '1.8.0', from: 'sha256:a', to: 'sha256:b', kind: 'Advanced' },
    ]);
  });

  it('detects a rebuild: same intermediate tag, new digest', () => {
    const before = map({
      '1.8.0': 'sha256:a',
      '1.8.0-rev2': 'sha256:a',
      '1.8.0-rev2-b1042': 'sha256:a',
    });
    const after = map({
      '1.8.0': 'sha256:b',
      '1.8.0-rev2': 'sha256:b',
      '1.8.0-rev2-b1042': 'sha256:a',
      '1.8.0-rev2-b1043': 'sha256:b',
    });
    assert.deepEqual(detectMovedTags(before, after), [
      { tag: '1.8.0', from: 'sha256:a', to: 'sha256:b', kind: 'Rebuilt' },
      { tag: '1.8.0-rev2', from: 'sha256:a', to: 'sha256:b', kind: 'Rebuilt' },
    ]);
  });

  it('reads a moved long tag as a rebuild (a build id reused)', () => {
    const before = map({ '1.8.0-rev2-b1042': 'sha256:a' });
    const after = map({ '1.8.0-rev2-b1042': 'sha256:b' });
    assert.deepEqual(detectMovedTags(before, after), [
      { tag: '1.8.0-rev2-b1042', from: 'sha256:a', to: 'sha256:b', kind: 'Rebuilt' },
    ]);
  });

  it('reads a short tag moving back to an older revision as a revert', () => {
    const before = map({ '1.8.0': 'sha256:b', '1.8.0-rev1': 'sha256:a', '1.8.0-rev2': 'sha256:b' });
    const after = map({ '1.8.0': 'sha256:a', '1.8.0-rev1': 'sha256:a', '1.8.0-rev2': 'sha256:b' });
    assert.deepEqual(detectMovedTags(before, after), [
      { tag: '1.8.0', from: 'sha256:b', to: 'sha256:a', kind: 'Reverted' },
    ]);
  });

  it('ignores added, removed and non-scheme tags', () => {
    const before = map({ latest: 'sha256:a', '1.7.0': 'sha256:z' });
    const after = map({ latest: 'sha256:b', '1.9.0': 'sha256:b' });
    assert.deepEqual(detectMovedTags(before, after), []);
  });

  it('judges a v-prefixed short tag like an unprefixed one', () => {
    const before = map({ 'v1.8.0': 'sha256:a', 'v1.8.0-rev1': 'sha256:a' });
    const after = map({
      'v1.8.0': 'sha256:b',
      'v1.8.0-rev1': 'sha256:a',
      'v1.8.0-rev3': 'sha256:b',
    });
    assert.equal(detectMovedTags(before, after)[0]?.kind, 'Advanced');
  });
});
