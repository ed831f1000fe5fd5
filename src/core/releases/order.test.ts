// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isMoltError } from '../errors.ts';
import { bySpecificity, compareReleases, compareVersions, sortReleases } from './order.ts';
import type { Release } from './release.ts';
import { parseTag } from './tag.ts';
import type { TagVersion } from './tag.ts';

/** Tags in the scheme, with the parts that could trip an ordering: pre-releases, v, rev, build. */
const schemeTag = fc
  .record({
    v: fc.boolean(),
    core: fc.tuple(fc.nat(12), fc.nat(12), fc.nat(12)),
    pre: fc.option(
      fc.constantFrom('alpha', 'alpha.1', 'beta', 'beta.2', 'beta.10', 'rc.1', 'b', '0', '7'),
    ),
    rev: fc.option(fc.nat(12)),
    build: fc.option(fc.constantFrom('1042', '1043', '5.1', 'abc')),
  })
  .map(({ v, core, pre, rev, build }) => {
    let tag = `${v ? 'v' : ''}${core.join('.')}${pre === null ? '' : `-${pre}`}`;
    if (rev !== null) tag += `-rev${rev}${build === null ? '' : `-b${build}`}`;
    return tag;
  });

const parsed = schemeTag.map((tag) => {
  const p = parseTag(tag);
  if (!p.ok) throw new Error(`generator produced an unparseable tag ${tag}`);
  return p.version;
});

const sign = (n: number): number => Math.sign(n) + 0;

describe('compareVersions (properties)', () => {
  it('is antisymmetric', () => {
    fc.assert(
      fc.property(
        parsed,
        parsed,
        (a, b) => sign(compareVersions(a, b)) === -sign(compareVersions(b, a)),
      ),
    );
  });

  it('is transitive', () => {
    fc.assert(
      fc.property(fc.array(parsed, { minLength: 3, maxLength: 3 }), ([a, b, c]) => {
        const [x, y, z] = [a, b, c] as [TagVersion, TagVersion, TagVersion];
        if (compareVersions(x, y) <= 0 && compareVersions(y, z) <= 0) {
          return compareVersions(x, z) <= 0;
        }
        return true;
      }),
    );
  });

  it('returns 0 exactly when app and rev are equal, whatever the build or v prefix', () => {
    fc.assert(
      fc.property(
        parsed,
        parsed,
        (a, b) => (compareVersions(a, b) === 0) === (a.app === b.app && a.rev === b.rev),
      ),
    );
  });

  it('puts a higher revision of the same app above, and any revision below the next app', () => {
    fc.assert(
      fc.property(parsed, fc.integer({ min: 1, max: 1000 }), (a, step) => {
        const higher = { app: a.app, rev: a.rev + step };
        return compareVersions(higher, a) > 0;
      }),
    );
    const rev99 = { app: '1.8.0', rev: 99 };
    assert.ok(compareVersions(rev99, { app: '1.8.1', rev: 0 }) < 0);
    assert.ok(compareVersions(rev99, { app: '1.9.0-alpha', rev: 0 }) < 0);
  });
});

describe('bySpecificity', () => {
  it('orders long, then intermediate, then short tags', () => {
    const tags = ['1.8.0', '1.8.0-rev2', '1.8.0-rev2-b1042'].map((t) => {
      const p = parseTag(t);
      assert.ok(p.ok);
      return p.version;
    });
    assert.deepEqual(
      [...tags].sort(bySpecificity).map((t) => t.tag),
      ['1.8.0-rev2-b1042', '1.8.0-rev2', '1.8.0'],
    );
  });
});

function release(digest: string, tags: readonly string[]): Release {
  return {
    digest,
    tag: tags[0] ?? '',
    tags,
    version: tags[0] ?? '',
    channels: ['stable'],
    official: true,
    created: undefined,
    kubernetes: undefined,
    upgradeFrom: undefined,
    signature: { status: 'unchecked' },
  };
}

describe('sortReleases', () => {
  it('lists newest first by (app, rev), never by created', () => {
    const rs = [
      { ...release('sha256:a', ['1.10.0']), created: '1970-01-01T00:00:00Z' },
      {
        ...release('sha256:b', ['1.9.0-rev10-b3', '1.9.0-rev10']),
        created: '2030-01-01T00:00:00Z',
      },
      release('sha256:c', ['1.9.0-rev9']),
      release('sha256:d', ['1.9.0-beta']),
    ];
    assert.deepEqual(
      sortReleases(rs).map((r) => r.digest),
      ['sha256:a', 'sha256:b', 'sha256:c', 'sha256:d'],
    );
  });

  it('after a rebuild ranks the digest holding the moved tags above the old build', () => {
    const old = release('sha256:ff', ['1.8.0-rev2-b1042']);
    const rebuilt = release('sha256:00', ['1.8.0-rev2-b1043', '1.8.0-rev2', '1.8.0']);
    assert.deepEqual(sortReleases([old, rebuilt]), [rebuilt, old]);
    assert.deepEqual(sortReleases([rebuilt, old]), [rebuilt, old]);
    assert.ok(compareReleases(rebuilt, old) > 0);
  });

  it('gives the same order whatever order the registry listed the releases in', () => {
    const tagsArb = fc.uniqueArray(schemeTag, { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(
        tagsArb.chain((tags) =>
          fc.tuple(fc.constant(tags), fc.shuffledSubarray(tags, { minLength: tags.length })),
        ),
        ([tags, shuffled]) => {
          const a = sortReleases(tags.map((t) => release(`sha256:${t}`, [t])));
          const b = sortReleases(shuffled.map((t) => release(`sha256:${t}`, [t])));
          assert.deepEqual(a, b);
          for (let i = 1; i < a.length; i++) {
            assert.ok(compareReleases(a[i - 1]!, a[i]!) >= 0);
          }
        },
      ),
    );
  });

  it('does not modify its input', () => {
    const rs = [release('sha256:a', ['1.0.0']), release('sha256:b', ['2.0.0'])];
    sortReleases(rs);
    assert.deepEqual(
      rs.map((r) => r.digest),
      ['sha256:a', 'sha256:b'],
    );
  });

  it('throws MOLT_INVALID_TAG for a hand-built release whose tag is not a version', () => {
    assert.throws(
      () => sortReleases([release('sha256:a', ['latest']), release('sha256:b', ['1.0.0'])]),
      (e) => isMoltError(e, 'MOLT_INVALID_TAG'),
    );
  });
});
