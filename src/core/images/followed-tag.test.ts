// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { followedTag, intermediateAt } from './followed-tag.ts';

const tagOf = (f: ReturnType<typeof followedTag>): string => (f.ok ? f.tag : f.reason);

describe('followedTag', () => {
  it('cuts the tag as written: a v prefix and a pre-release stay', () => {
    const rebuilds = { kind: 'rebuilds' } as const;
    const revisions = { kind: 'revisions' } as const;
    assert.equal(tagOf(followedTag(rebuilds, 'v1.8.0-rc.1-rev2-b5.1', [])), 'v1.8.0-rc.1-rev2');
    assert.equal(tagOf(followedTag(revisions, 'v1.8.0-rc.1-rev2-b5.1', [])), 'v1.8.0-rc.1');
    assert.equal(tagOf(followedTag(revisions, '1.8.0', [])), '1.8.0');
    assert.equal(tagOf(followedTag(revisions, undefined, [])), 'NoTag');
  });

  it('semver takes short tags only, pre-releases only when the range asks', () => {
    const tags = ['1.9.0-rev1', '1.9.0-rc.1', '1.8.0', 'latest'];
    assert.equal(tagOf(followedTag({ kind: 'semver', range: '^1' }, undefined, tags)), '1.8.0');
    const pre = { kind: 'semver', range: '>=1.9.0-rc.0 <2' } as const;
    assert.equal(tagOf(followedTag(pre, undefined, tags)), '1.9.0-rc.1');
  });
});

describe('intermediateAt', () => {
  it('names the newest intermediate tag on a digest', () => {
    const tags = new Map([
      ['1.8.0', 'd2'],
      ['1.8.0-rev2', 'd2'],
      ['1.8.0-rev10', 'd2'],
      ['1.8.0-rev10-b1', 'd2'],
      ['1.9.0-rev1', 'd3'],
    ]);
    assert.equal(intermediateAt(tags, 'd2'), '1.8.0-rev10');
    assert.equal(intermediateAt(tags, 'd9'), undefined);
  });
});
