// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dig, HOUR, MIN, policy, REPO, repo, T0 } from './fixtures.test.ts';
import { resolveTarget, type RepositoryView, type TargetDecision } from './target.ts';
import type { ImagePolicy } from './types.ts';

const ctx = { platforms: ['linux/amd64'], now: T0 };
const resolve = (p: ImagePolicy, image: string, r: RepositoryView, now = T0): TargetDecision =>
  resolveTarget(p, image, r, { ...ctx, now });
function asMove(d: TargetDecision): Extract<TargetDecision, { kind: 'move' }> {
  assert.equal(d.kind, 'move', JSON.stringify(d));
  return d;
}
function asSkip(d: TargetDecision): Extract<TargetDecision, { kind: 'skip' }> {
  assert.equal(d.kind, 'skip', JSON.stringify(d));
  return d;
}
const reasonOf = (d: TargetDecision): string =>
  d.kind === 'wait' || d.kind === 'skip' ? d.reason : d.kind;

/** 1.8.0-rev2 was rebuilt (dig 2 replaces dig 1); 1.8.0-rev3 is a new revision (dig 3). */
const rebuilt = repo({
  '1.8.0-rev2-b1': dig(1),
  '1.8.0-rev2-b2': dig(2),
  '1.8.0-rev2': dig(2),
  '1.8.0-rev3-b1': dig(3),
  '1.8.0-rev3': dig(3),
  '1.8.0': dig(3),
  '1.9.0-rev1': dig(4),
  '1.9.0': dig(4),
  '2.0.0': dig(5),
});
const running = `${REPO}:1.8.0-rev2@${dig(1)}`;

describe('resolveTarget: rebuilds', () => {
  it('moves to a rebuild behind the intermediate tag, written as tag@digest', () => {
    assert.deepEqual(resolve(policy(), running, rebuilt), {
      kind: 'move',
      tag: '1.8.0-rev2',
      digest: dig(2),
      image: `${REPO}:1.8.0-rev2@${dig(2)}`,
      from: dig(1),
    });
  });

  it('follows the intermediate tag of a long tag', () => {
    const d = resolve(policy(), `${REPO}:1.8.0-rev2-b1`, rebuilt);
    assert.equal(d.kind, 'move');
    assert.equal(asMove(d).tag, '1.8.0-rev2');
  });

  it('ignores a new revision: the rebuilt digest is already running', () => {
    assert.deepEqual(resolve(policy(), `${REPO}:1.8.0-rev2@${dig(2)}`, rebuilt), {
      kind: 'current',
      digest: dig(2),
    });
  });

  it('takes the digest the tag has now when the image names no digest', () => {
    assert.equal(resolve(policy(), `${REPO}:1.8.0-rev2`, rebuilt).kind, 'current');
  });

  it('pins by digest a container whose tag discovery has not seen', () => {
    const r = repo({ '1.8.0-rev2': dig(2) });
    const d = resolve(policy(), `${REPO}:1.8.0-rev2-b9`, r);
    assert.equal(asMove(d).image, `${REPO}:1.8.0-rev2@${dig(2)}`);
    assert.equal(asMove(d).from, undefined);
  });

  for (const [image, reason, message] of [
    [`${REPO}:1.8.0`, 'ShortTag', /use follow: revisions/],
    [`${REPO}:latest`, 'NotThreeTier', /<app>-rev<N>\[-b<build>\]/],
    [`${REPO}@${dig(1)}`, 'NoTag', /digest only/],
    [
      'registry.example.com/acme/api:1.8.0-rev2',
      'NotFollowed',
      /not in registry.example.com\/acme\/web/,
    ],
    ['web:1.8.0-rev2', 'NotFollowed', /not in/],
  ] as const) {
    it(`skips ${image}: ${reason}`, () => {
      const d = resolve(policy(), image, rebuilt);
      assert.equal(d.kind, 'skip');
      assert.equal(reasonOf(d), reason);
      assert.match(asSkip(d).message, message);
    });
  }

  it('waits while the followed tag is not in the repository', () => {
    const d = resolve(policy(), `${REPO}:1.7.0-rev1@${dig(1)}`, rebuilt);
    assert.equal(reasonOf(d), 'TagMissing');
    assert.equal(d.kind, 'wait');
  });
});

describe('resolveTarget: revisions and semver', () => {
  const revisions = policy({ follow: { kind: 'revisions' } });

  it('takes a new revision, written with the intermediate tag that points at it', () => {
    const d = resolve(revisions, running, rebuilt);
    assert.equal(asMove(d).image, `${REPO}:1.8.0-rev3@${dig(3)}`);
  });

  it('writes the short tag when no intermediate tag points at the target', () => {
    const d = resolve(revisions, running, repo({ '1.8.0': dig(7) }));
    assert.equal(asMove(d).tag, '1.8.0');
  });

  it('follows the highest short tag in range, by version not by text or listing order', () => {
    const r = repo({ '1.10.0': dig(10), '1.9.0': dig(9), '2.0.0': dig(20), 'v1.10.0': dig(11) });
    const d = resolve(policy({ follow: { kind: 'semver', range: '^1.8.0' } }), running, r);
    assert.equal(asMove(d).digest, dig(10), '1.10.0 over 1.9.0; 1.10.0 before v1.10.0');
    const none = resolve(policy({ follow: { kind: 'semver', range: '^3' } }), running, r);
    assert.equal(reasonOf(none), 'TagMissing');
  });

  it('semver needs no tag on the container', () => {
    const d = resolve(
      policy({ follow: { kind: 'semver', range: '1.x' } }),
      `${REPO}@${dig(1)}`,
      rebuilt,
    );
    assert.equal(asMove(d).tag, '1.9.0-rev1');
  });
});

describe('resolveTarget: GM pins, signatures, platforms', () => {
  it('never replaces a GM digest, and says why and what it would have taken', () => {
    const p = policy({ gm: [{ digest: dig(1), reason: 'SLE 16 GM' }] });
    const d = resolve(p, running, rebuilt);
    assert.equal(d.kind, 'skip');
    assert.equal(reasonOf(d), 'GMPinned');
    assert.match(asSkip(d).message, /SLE 16 GM/);
    assert.deepEqual(asSkip(d).pin, p.gm[0]);
    assert.deepEqual(asSkip(d).wouldMoveTo, { tag: '1.8.0-rev2', digest: dig(2) });
    const revisions = resolve({ ...p, follow: { kind: 'revisions' } }, running, rebuilt);
    assert.equal(reasonOf(revisions), 'GMPinned');
    // A pinned container running by tag: its digest is the tag's now.
    const byTag = resolve(
      policy({ gm: [{ digest: dig(2), reason: 'GM' }] }),
      `${REPO}:1.8.0-rev2`,
      rebuilt,
    );
    assert.equal(reasonOf(byTag), 'GMPinned');
  });

  it('waits for a signature when the policy requires one', () => {
    const p = policy({ requireSignature: true });
    assert.equal(reasonOf(resolve(p, running, rebuilt)), 'Unsigned');
    const signed = repo(Object.fromEntries(rebuilt.tags), { signed: new Set([dig(2)]) });
    assert.equal(resolve(p, running, signed).kind, 'move');
  });

  const index = (platforms: string[]): RepositoryView =>
    repo({ '1.8.0-rev2': dig(2) }, { indexes: new Map([[dig(2), { platforms, firstSeen: T0 }]]) });

  it('waits for an index missing a platform of the Nodes, then takes it after the settle', () => {
    const r = index(['linux/arm64/v8']);
    const d = resolveTarget(policy(), running, r, {
      platforms: ['linux/amd64', 'linux/arm64'],
      now: T0 + MIN,
    });
    assert.equal(reasonOf(d), 'PlatformsMissing');
    assert.match(d.kind === 'wait' ? d.message : '', /lacks linux\/amd64;.*2026-11-27T13:00:00Z/);
    const later = resolveTarget(policy(), running, r, {
      platforms: ['linux/amd64'],
      now: T0 + HOUR,
    });
    assert.equal(later.kind, 'move');
    assert.deepEqual(asMove(later).missingPlatforms, ['linux/amd64']);
  });

  it('reads the policy platforms and settle over the cluster', () => {
    const r = index(['linux/amd64']);
    const p = policy({ platforms: ['linux/amd64', 'linux/s390x'], settleMs: 10 * MIN });
    assert.equal(reasonOf(resolve(p, running, r, T0 + 9 * MIN)), 'PlatformsMissing');
    assert.equal(resolve(p, running, r, T0 + 10 * MIN).kind, 'move');
    assert.equal(resolve(policy(), running, r).kind, 'move', 'the Nodes run amd64 only');
    const exact = index(['linux/arm64']);
    const v8 = resolveTarget(policy({ platforms: ['linux/arm64/v8'] }), running, exact, ctx);
    assert.equal(reasonOf(v8), 'PlatformsMissing', 'a variant asked for is not implied');
  });
});
