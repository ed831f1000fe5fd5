// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isMoltError } from '../errors.ts';
import { compareVersions } from './order.ts';
import { parseTag, parseVersion, partitionTags } from './tag.ts';
import type { TagVersion } from './tag.ts';

interface Vectors {
  readonly accepted: readonly {
    tag: string;
    app: string;
    rev: number;
    build: string | null;
    tier: string;
  }[];
  readonly rejected: readonly { tag: string; code: string; why: string }[];
  readonly order: readonly (readonly string[])[];
}

const vectors = JSON.parse(
  readFileSync(new URL('testdata/tag-vectors.json', import.meta.url), 'utf8'),
) as Vectors;

function version(tag: string): TagVersion {
  const parsed = parseTag(tag);
  assert.ok(parsed.ok, `${tag} should parse: ${parsed.ok ? '' : parsed.skipped.reason}`);
  return parsed.version;
}

describe('parseTag', () => {
  for (const v of vectors.accepted) {
    it(`reads ${v.tag} as app ${v.app}, rev ${v.rev}`, () => {
      assert.deepEqual(version(v.tag), {
        tag: v.tag,
        app: v.app,
        rev: v.rev,
        build: v.build ?? undefined,
        tier: v.tier,
      });
    });
  }

  for (const v of vectors.rejected) {
    it(`skips ${v.tag} with ${v.code} (${v.why})`, () => {
      const parsed = parseTag(v.tag);
      assert.equal(parsed.ok, false);
      assert.equal(parsed.skipped.tag, v.tag);
      assert.equal(parsed.skipped.code, v.code);
      assert.ok(parsed.skipped.reason.length > 10, 'the reason is a sentence');
    });
  }

  it('names the specific mistake in the reason', () => {
    const reason = (tag: string): string => {
      const parsed = parseTag(tag);
      return parsed.ok ? '' : parsed.skipped.reason;
    };
    assert.match(reason('1.9.0-rev02'), /leading zero/);
    assert.match(reason('1.9.0+b5'), /'\+' is not allowed/);
    assert.match(reason('1.9.0-b7'), /must follow '-rev<N>'/);
    assert.match(reason('1.9.0-alpha-1'), /may not contain '-'/);
    assert.match(reason('latest'), /not a version/);
  });

  it('rejects a tag longer than the OCI limit of 128 characters', () => {
    const tag = `1.0.0-rev1-b${'1'.repeat(120)}`;
    assert.equal(tag.length > 128, true);
    const parsed = parseTag(tag);
    assert.equal(parsed.ok, false);
    assert.equal(parseTag(tag.slice(0, 128)).ok, true);
  });
});

describe('ordering of the vectors', () => {
  const groups = vectors.order.map((g) => g.map(version));

  it('puts each group strictly above every earlier group', () => {
    groups.forEach((group, i) => {
      for (const earlier of groups.slice(0, i).flat()) {
        for (const v of group) {
          assert.ok(compareVersions(v, earlier) > 0, `${v.tag} > ${earlier.tag}`);
          assert.ok(compareVersions(earlier, v) < 0, `${earlier.tag} < ${v.tag}`);
        }
      }
    });
  });

  it('treats tags in one group as equal: build is identity, not order', () => {
    for (const group of groups) {
      for (const a of group) for (const b of group) assert.equal(compareVersions(a, b), 0);
    }
  });

  it('sorts a shuffled set into the documented order, unlike semver or lexical order', () => {
    const tags = ['1.9.0-rev10', '1.10.0', '1.8.0-rev2', '1.9.0-rev9', '1.8.0', '1.9.0-beta'];
    const sorted = [...tags].sort((a, b) => compareVersions(version(a), version(b)));
    assert.deepEqual(sorted, [
      '1.8.0',
      '1.8.0-rev2',
      '1.9.0-beta',
      '1.9.0-rev9',
      '1.9.0-rev10',
      '1.10.0',
    ]);
  });
});

describe('parseVersion', () => {
  it('accepts what tags accept, trimmed', () => {
    assert.equal(parseVersion(' v1.8.0-rev2 ').app, '1.8.0');
    assert.equal(parseVersion('1.8.0-rev2').rev, 2);
  });

  it('throws MOLT_INVALID_VERSION with the reason and a hint for garbage', () => {
    for (const bad of ['', 'latest', '1.8', '1.8.0+x', 'one.two.three']) {
      assert.throws(
        () => parseVersion(bad, 'current version'),
        (e) =>
          isMoltError(e, 'MOLT_INVALID_VERSION') &&
          /current version/.test(e.message) &&
          e.hint !== undefined,
        bad,
      );
    }
  });
});

describe('partitionTags', () => {
  it('splits versions from skipped tags and drops duplicates', () => {
    const { versions, skipped } = partitionTags([
      '1.8.0',
      'latest',
      '1.8.0',
      '1.8.0-rev2',
      'x.sig',
    ]);
    assert.deepEqual(
      versions.map((v) => v.tag),
      ['1.8.0', '1.8.0-rev2'],
    );
    assert.deepEqual(
      skipped.map((s) => [s.tag, s.code]),
      [
        ['latest', 'MOLT_TAG_NOT_VERSION'],
        ['x.sig', 'MOLT_TAG_ARTIFACT'],
      ],
    );
  });
});
