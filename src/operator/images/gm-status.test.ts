// SPDX-License-Identifier: Apache-2.0
// What the GM checks tell people: the `GMImageMissing` condition of an ImagePolicy object, and the
// changes worth a log line — once per change, not on every check.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { policy } from '../../core/images/fixtures.test.ts';
import { verdict } from '../../testkit/image-world.ts';
import type { GmFinding, GmState } from './gm-check.ts';
import { gmChangeLine, gmChanges, gmCondition, withGmConditions } from './gm-status.ts';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;
const web = policy({
  name: 'web',
  repository: 'r.example/acme/web',
  gm: [
    { digest: A, reason: 'GM 1.8' },
    { digest: B, reason: 'GM 1.9' },
  ],
});
const finding = (digest: string, state: GmState, over: Partial<GmFinding> = {}): GmFinding => ({
  policy: 'web',
  repository: 'r.example/acme/web',
  digest,
  reason: digest === A ? 'GM 1.8' : 'GM 1.9',
  state,
  ...over,
});

describe('the GMImageMissing condition', () => {
  it('is True naming every missing digest and its reason', () => {
    assert.deepEqual(gmCondition(web, [finding(A, 'missing'), finding(B, 'unknown')]), {
      type: 'GMImageMissing',
      status: 'True',
      reason: 'DigestMissing',
      message: `not in r.example/acme/web any more: ${A} (GM 1.8)`,
    });
  });

  it('is False when every pin was found', () => {
    assert.deepEqual(gmCondition(web, [finding(A, 'present'), finding(B, 'present')]), {
      type: 'GMImageMissing',
      status: 'False',
      reason: 'AllPresent',
      message: '2 GM digests present in r.example/acme/web',
    });
  });

  it('is Unknown when the registry failed, or before a pin was checked; none without pins', () => {
    const failed = gmCondition(web, [
      finding(A, 'present'),
      finding(B, 'unknown', { message: 'MOLT_REGISTRY_UNREACHABLE: down' }),
    ]);
    assert.deepEqual(
      [failed?.status, failed?.reason, failed?.message],
      ['Unknown', 'RegistryUnreachable', `${B}: MOLT_REGISTRY_UNREACHABLE: down`],
    );
    // B was pinned after the last check, or no check ran yet.
    assert.equal(gmCondition(web, [finding(A, 'present')])?.reason, 'NotCheckedYet');
    assert.equal(gmCondition(web, undefined)?.status, 'Unknown');
    // Another policy's findings say nothing of this one.
    assert.equal(
      gmCondition(web, [finding(A, 'missing', { policy: 'dns' }), finding(B, 'present')])?.reason,
      'NotCheckedYet',
    );
    assert.equal(gmCondition(policy({ gm: [] }), [finding(A, 'missing')]), undefined);
  });

  it('goes on the verdict of an object whose policy is in force, not one the fleet file overrides', () => {
    const out = withGmConditions(
      [
        verdict('web', 'Accepted'),
        verdict('file', 'DefinedInFleetFile'),
        verdict('bad', 'InvalidSpec'),
      ],
      new Map([
        ['web', web],
        ['file', { ...web, name: 'file' }],
      ]),
      [finding(A, 'missing'), finding(B, 'present')],
    );
    assert.deepEqual(
      out.map((v) => v.conditions?.map((c) => `${c.type}=${c.status}`)),
      [['GMImageMissing=True'], undefined, undefined],
    );
  });
});

describe('the GM changes', () => {
  it('are what changed since the last check; a first check tells only what is not present', () => {
    const first = gmChanges(new Map(), [finding(A, 'present'), finding(B, 'missing')]);
    assert.deepEqual(first.changes, [{ finding: finding(B, 'missing') }]);
    const same = gmChanges(first.next, [finding(A, 'present'), finding(B, 'missing')]);
    assert.deepEqual(same.changes, []);
    const moved = gmChanges(same.next, [
      finding(A, 'unknown', { message: 'down' }),
      finding(B, 'present'),
    ]);
    assert.deepEqual(
      moved.changes.map((c) => [c.finding.digest, c.was, c.finding.state]),
      [
        [A, 'present', 'unknown'],
        [B, 'missing', 'present'],
      ],
    );
    assert.deepEqual(moved.changes.map(gmChangeLine), [
      `image policy web: GM digest ${A} (GM 1.8) in r.example/acme/web cannot be checked: down`,
      `image policy web: GM digest ${B} (GM 1.9) in r.example/acme/web is in the registry again`,
    ]);
    assert.equal(
      gmChangeLine({ finding: finding(A, 'missing') }),
      `image policy web: GM digest ${A} (GM 1.8) in r.example/acme/web is missing from the registry`,
    );
  });
});
