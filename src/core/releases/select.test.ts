// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isMoltError } from '../errors.ts';
import type { Release } from './release.ts';
import { directVerdict, selectLatest } from './select.ts';
import type { DirectOptions, Rejection, Selection } from './select.ts';

let next = 0;

/** A stable, official, verified release unless told otherwise; the digest is unique per call. */
function release(tag: string, over: Partial<Release> = {}): Release {
  next += 1;
  return {
    digest: `sha256:${String(next).padStart(64, '0')}`,
    tag,
    tags: [tag],
    version: tag,
    channels: ['stable'],
    official: true,
    created: undefined,
    kubernetes: undefined,
    upgradeFrom: undefined,
    signature: { status: 'verified', format: 'sigstore-bundle' },
    ...over,
  };
}

function chosen(s: Selection): Release {
  assert.ok(s.found, s.found ? '' : s.reason);
  return s.release;
}

const tagsOf = (rs: readonly Release[]): string[] => rs.map((r) => r.tag);
const why = (s: Selection): [string, string][] => s.rejected.map((r: Rejection) => [r.tag, r.code]);

describe('selectLatest', () => {
  it('picks the newest official release in the channel and says why newer ones lost', () => {
    const releases = [
      release('1.8.0'),
      release('1.9.0'),
      release('1.10.0', { official: false }),
      release('1.11.0', { channels: ['beta'] }),
    ];
    const s = selectLatest({ releases, channel: 'stable' });
    assert.equal(chosen(s).tag, '1.9.0');
    assert.ok(s.found);
    assert.deepEqual(tagsOf(s.path), ['1.9.0']);
    assert.deepEqual(why(s), [
      ['1.11.0', 'NotInChannel'],
      ['1.10.0', 'Unofficial'],
      ['1.8.0', 'Superseded'],
    ]);
    const rejection = s.rejected[0]!;
    assert.deepEqual(Object.keys(rejection).sort(), ['code', 'digest', 'reason', 'tag', 'version']);
    assert.match(rejection.reason, /not in channel stable \(channels beta\)/);
  });

  it('orders by revision: 1.8.0-rev2 is an upgrade from 1.8.0, rev10 beats rev9', () => {
    const releases = [release('1.8.0-rev2'), release('1.8.0-rev10'), release('1.8.0-rev9')];
    assert.equal(
      chosen(selectLatest({ releases, channel: 'stable', current: '1.8.0' })).tag,
      '1.8.0-rev10',
    );
  });

  it('skips releases whose kubelet the cluster API server does not support, saying why', () => {
    const releases = [
      release('1.8.0', { kubelet: 'v1.31.2' }),
      release('1.9.0', { kubelet: 'v1.32.0' }),
    ];
    const s = selectLatest({ releases, channel: 'stable', kubernetes: 'v1.31.4' });
    assert.equal(chosen(s).tag, '1.8.0');
    assert.deepEqual(why(s), [['1.9.0', 'KubernetesIncompatible']]);
    assert.equal(
      s.rejected[0]!.reason,
      'kubelet v1.32.0 is newer than the API server 1.31.4: the version skew policy allows kubelets 1.28 to 1.31',
    );
    const unknown = selectLatest({ releases, channel: 'stable' });
    assert.equal(chosen(unknown).tag, '1.9.0', 'a cluster version not known: not checked');
  });

  it('skips releases that do not support the cluster Kubernetes version', () => {
    const releases = [
      release('1.8.0', { kubernetes: '>=1.29.0 <1.32.0' }),
      release('1.9.0', { kubernetes: '>=1.32.0' }),
    ];
    const s = selectLatest({ releases, channel: 'stable', kubernetes: 'v1.31.4' });
    assert.equal(chosen(s).tag, '1.8.0');
    assert.deepEqual(why(s), [['1.9.0', 'KubernetesIncompatible']]);
    assert.match(
      s.rejected[0]!.reason,
      /supports Kubernetes >=1\.32\.0, the cluster runs 1\.31\.4/,
    );
  });

  it('reads vendor Kubernetes versions (v1.30.1-eks-1234) as their MAJOR.MINOR.PATCH', () => {
    const releases = [release('1.9.0', { kubernetes: '>=1.30.1' })];
    assert.equal(
      chosen(selectLatest({ releases, channel: 'stable', kubernetes: 'v1.30.1-eks-1234' })).tag,
      '1.9.0',
    );
    assert.equal(
      chosen(selectLatest({ releases, channel: 'stable', kubernetes: '1.30.1-gke.100' })).tag,
      '1.9.0',
    );
  });

  it('does not check Kubernetes ranges when the cluster version is unknown', () => {
    const releases = [release('1.9.0', { kubernetes: '>=9.0.0' })];
    assert.equal(chosen(selectLatest({ releases, channel: 'stable' })).tag, '1.9.0');
  });

  it('requires a verified signature only when asked, and never takes an invalid one', () => {
    const releases = [
      release('1.7.0'),
      release('1.8.0', { signature: { status: 'unchecked' } }),
      release('1.9.0', { signature: { status: 'unsigned' } }),
      release('1.10.0', { signature: { status: 'invalid', reason: 'wrong key' } }),
    ];
    const lax = selectLatest({ releases, channel: 'stable' });
    assert.equal(chosen(lax).tag, '1.9.0');
    assert.deepEqual(why(lax).slice(0, 1), [['1.10.0', 'SignatureInvalid']]);
    const strict = selectLatest({ releases, channel: 'stable', requireSignature: true });
    assert.equal(chosen(strict).tag, '1.7.0');
    assert.deepEqual(why(strict), [
      ['1.10.0', 'SignatureInvalid'],
      ['1.9.0', 'Unsigned'],
      ['1.8.0', 'SignatureUnchecked'],
    ]);
    assert.match(strict.rejected[0]!.reason, /wrong key/);
  });

  it('lists a release equal to the current one as NotNewer and leaves older ones out', () => {
    const releases = [release('1.7.0'), release('1.8.0'), release('1.9.0')];
    const s = selectLatest({ releases, channel: 'stable', current: '1.8.0' });
    assert.equal(chosen(s).tag, '1.9.0');
    assert.deepEqual(why(s), [['1.8.0', 'NotNewer']]);
  });

  it('says when no release is in the channel at all, with the channels there are and the near one', () => {
    const releases = [release('1.9.0', { channels: ['beta'] }), release('1.8.0')];
    const typo = selectLatest({ releases, channel: 'stabel' });
    assert.ok(!typo.found);
    assert.match(
      typo.reason,
      /; no release is in channel stabel \(channels here: beta, stable\); did you mean stable\?$/,
    );
    const none = selectLatest({ releases, channel: 'edge' });
    assert.ok(!none.found);
    assert.match(none.reason, /no release is in channel edge \(channels here: beta, stable\)$/);
    const empty = selectLatest({ releases, channel: 'stable', current: '1.8.0' });
    assert.ok(!empty.found);
    assert.doesNotMatch(
      empty.reason,
      /no release is in channel/,
      'stable has a release: not a typo',
    );
  });

  it('returns "no eligible release" as a value with the rejections', () => {
    const releases = [release('1.9.0', { official: false }), release('1.8.0')];
    const s = selectLatest({ releases, channel: 'stable', current: '1.8.0' });
    assert.equal(s.found, false);
    assert.ok(!s.found);
    assert.equal(s.code, 'MOLT_NO_ELIGIBLE_RELEASE');
    assert.match(s.reason, /no release in channel stable newer than 1\.8\.0 is eligible/);
    assert.deepEqual(why(s), [
      ['1.9.0', 'Unofficial'],
      ['1.8.0', 'NotNewer'],
    ]);
  });

  it('returns "no eligible release" for an empty list', () => {
    const s = selectLatest({ releases: [], channel: 'stable' });
    assert.equal(s.found, false);
    assert.deepEqual(s.rejected, []);
  });

  it('normalises the channel name', () => {
    assert.equal(
      chosen(selectLatest({ releases: [release('1.0.0')], channel: ' Stable ' })).tag,
      '1.0.0',
    );
  });

  it('throws MoltError for malformed inputs instead of selecting', () => {
    const releases = [release('1.0.0')];
    const cases: [Parameters<typeof selectLatest>[0], string][] = [
      [{ releases, channel: 'stable', current: 'latest' }, 'MOLT_INVALID_VERSION'],
      [{ releases, channel: 'stable', current: '1.8' }, 'MOLT_INVALID_VERSION'],
      [{ releases, channel: 'stable', kubernetes: 'one-thirty' }, 'MOLT_INVALID_VERSION'],
      [{ releases, channel: 'stable', kubernetes: '1.30' }, 'MOLT_INVALID_VERSION'],
      [{ releases, channel: 'st able' }, 'MOLT_INVALID_CHANNEL'],
      [{ releases, channel: '' }, 'MOLT_INVALID_CHANNEL'],
    ];
    for (const [options, code] of cases) {
      assert.throws(
        () => selectLatest(options),
        (e) => isMoltError(e) && e.code === code,
        JSON.stringify(options),
      );
    }
  });

  it('applies upgrade-from to pre-release apps (includePrerelease)', () => {
    const releases = [release('1.9.0', { upgradeFrom: '>=1.8.0' })];
    assert.equal(
      chosen(selectLatest({ releases, channel: 'stable', current: '1.9.0-beta.1' })).tag,
      '1.9.0',
    );
  });

  it('checks upgrade-from against the app version, not the revision', () => {
    const releases = [release('1.9.0', { upgradeFrom: '1.8.x' })];
    assert.equal(
      chosen(selectLatest({ releases, channel: 'stable', current: '1.8.0-rev7' })).tag,
      '1.9.0',
    );
  });
});

describe('selectLatest upgrade paths', () => {
  it('goes through an intermediate release when upgrade-from forbids the direct jump', () => {
    const releases = [
      release('1.8.0', { upgradeFrom: '>=1.7.0' }),
      release('1.9.0', { upgradeFrom: '>=1.8.0' }),
    ];
    const s = selectLatest({ releases, channel: 'stable', current: '1.7.0' });
    assert.equal(chosen(s).tag, '1.9.0');
    assert.ok(s.found);
    assert.deepEqual(tagsOf(s.path), ['1.8.0', '1.9.0']);
    assert.deepEqual(s.rejected, []);
  });

  it('prefers the fewest hops, then the newest intermediate', () => {
    const releases = [
      release('1.8.0', { upgradeFrom: '>=1.7.0' }),
      release('1.8.5', { upgradeFrom: '>=1.7.0' }),
      release('1.9.0', { upgradeFrom: '>=1.8.0' }),
      release('2.0.0', { upgradeFrom: '>=1.8.0' }),
    ];
    const s = selectLatest({ releases, channel: 'stable', current: '1.7.0' });
    assert.ok(s.found);
    assert.deepEqual(tagsOf(s.path), ['1.8.5', '2.0.0']);
    assert.deepEqual(why(s), [
      ['1.9.0', 'Superseded'],
      ['1.8.0', 'Superseded'],
    ]);
  });

  it('takes a longer path only when no shorter one exists', () => {
    const releases = [
      release('1.8.0', { upgradeFrom: '>=1.7.0' }),
      release('1.9.0', { upgradeFrom: '>=1.8.0' }),
      release('1.9.5', { upgradeFrom: '>=1.7.0' }),
      release('2.0.0', { upgradeFrom: '>=1.9.0' }),
    ];
    const s = selectLatest({ releases, channel: 'stable', current: '1.7.0' });
    assert.ok(s.found);
    assert.deepEqual(tagsOf(s.path), ['1.9.5', '2.0.0']);
  });

  it('does not follow the newest first step when it leads to a longer path', () => {
    const releases = [
      release('1.1.0', { upgradeFrom: '1.0.x' }),
      release('1.2.0', { upgradeFrom: '^1.0.0' }),
      release('1.3.0', { upgradeFrom: '1.2.x' }),
      release('2.0.0', { upgradeFrom: '1.1.x || 1.3.x' }),
    ];
    const s = selectLatest({ releases, channel: 'stable', current: '1.0.0' });
    assert.ok(s.found);
    assert.deepEqual(tagsOf(s.path), ['1.1.0', '2.0.0']);
  });

  it('never routes through an ineligible release, and reports the target it cannot reach', () => {
    const releases = [
      release('1.8.0', { upgradeFrom: '>=1.7.0' }),
      release('1.9.0', { upgradeFrom: '>=1.8.0', official: false }),
      release('2.0.0', { upgradeFrom: '>=1.9.0' }),
    ];
    const s = selectLatest({ releases, channel: 'stable', current: '1.8.0' });
    assert.equal(s.found, false);
    assert.ok(!s.found);
    assert.match(s.reason, /can be reached from 1\.8\.0/);
    assert.deepEqual(why(s), [
      ['2.0.0', 'NotReachable'],
      ['1.9.0', 'Unofficial'],
      ['1.8.0', 'NotNewer'],
    ]);
    assert.match(s.rejected[0]!.reason, /upgrade-from range >=1\.9\.0 excludes/);
  });

  it('treats every eligible release as reachable when no current version is given', () => {
    const releases = [release('1.8.0'), release('2.0.0', { upgradeFrom: '>=1.9.0' })];
    const s = selectLatest({ releases, channel: 'stable' });
    assert.ok(s.found);
    assert.deepEqual(tagsOf(s.path), ['2.0.0']);
  });
});

describe('directVerdict', () => {
  const code = (r: Release, o: DirectOptions): string | undefined => directVerdict(r, o)?.code;

  it('applies the checks selectLatest applies to each release', () => {
    const from = { channel: 'stable', current: '1.0.0' };
    assert.equal(code(release('1.1.0'), from), undefined);
    assert.equal(code(release('1.0.0'), from), 'NotNewer');
    assert.equal(code(release('0.9.0'), from), 'NotNewer');
    assert.equal(code(release('1.1.0', { channels: ['beta'] }), from), 'NotInChannel');
    assert.equal(code(release('1.1.0', { official: false }), from), 'Unofficial');
    const invalid = release('1.1.0', { signature: { status: 'invalid', reason: 'forged' } });
    assert.equal(code(invalid, from), 'SignatureInvalid');
    const unchecked = release('1.1.0', { signature: { status: 'unchecked' } });
    assert.equal(code(unchecked, from), undefined);
    assert.equal(code(unchecked, { ...from, requireSignature: true }), 'SignatureUnchecked');
    const k = release('1.1.0', { kubernetes: '>=1.36.0' });
    assert.equal(code(k, { ...from, kubernetes: 'v1.35.0' }), 'KubernetesIncompatible');
  });

  it('takes one step only: the upgrade-from range must admit the current version', () => {
    const ranged = release('1.2.0', { upgradeFrom: '>=1.1.0' });
    assert.deepEqual(directVerdict(ranged, { channel: 'stable', current: '1.0.0' }), {
      code: 'NotReachable',
      reason: 'its upgrade-from range >=1.1.0 excludes 1.0.0',
    });
    assert.equal(code(ranged, { channel: 'stable', current: '1.1.0' }), undefined);
    assert.equal(code(release('1.2.0', { upgradeFrom: '>=99' }), { channel: 'stable' }), undefined);
  });

  it('without a channel, wants the release in some channel', () => {
    assert.equal(code(release('1.1.0', { channels: ['beta'] }), {}), undefined);
    assert.deepEqual(directVerdict(release('1.1.0', { channels: [] }), {}), {
      code: 'NotInChannel',
      reason: 'in no channel',
    });
  });
});
