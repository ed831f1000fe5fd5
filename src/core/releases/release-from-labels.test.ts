// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { releaseFromLabels } from './release-from-labels.ts';
import type { ReleaseInput, ReleaseOutcome } from './release-from-labels.ts';
import { ReleaseLabel } from './release.ts';
import type { Release, SkippedTag } from './release.ts';

const DIGEST = 'sha256:1111111111111111111111111111111111111111111111111111111111111111';

function input(
  labels: Record<string, string> | undefined,
  tags = ['1.8.0-rev2', '1.8.0', '1.8.0-rev2-b1042'],
): ReleaseInput {
  return { digest: DIGEST, tags, labels, signature: { status: 'unsigned' } };
}

function ok(outcome: ReleaseOutcome): Release {
  assert.ok(outcome.ok, outcome.ok ? '' : outcome.skipped.reason);
  return outcome.release;
}

function skipped(outcome: ReleaseOutcome): SkippedTag {
  assert.equal(outcome.ok, false, 'the digest should be skipped');
  return outcome.skipped;
}

describe('releaseFromLabels', () => {
  it('reads every label of a complete release', () => {
    const r = ok(
      releaseFromLabels({
        ...input({
          [ReleaseLabel.Version]: '1.8.0-rev2',
          [ReleaseLabel.Created]: '2025-03-01T10:00:00Z',
          [ReleaseLabel.Channels]: ' Stable, beta ,stable,',
          [ReleaseLabel.Official]: 'true',
          [ReleaseLabel.Kubernetes]: '>=1.30.0 <1.33.0',
          [ReleaseLabel.UpgradeFrom]: '>=1.7.0',
          [ReleaseLabel.KubernetesVersion]: 'v1.32.4',
          [ReleaseLabel.KubeletVersion]: 'v1.32.4',
          [ReleaseLabel.ContainerdVersion]: 'v2.4.2',
        }),
        signature: { status: 'verified', format: 'cosign-legacy' },
      }),
    );
    assert.deepEqual(r, {
      digest: DIGEST,
      tag: '1.8.0-rev2-b1042',
      tags: ['1.8.0-rev2-b1042', '1.8.0-rev2', '1.8.0'],
      version: '1.8.0-rev2',
      channels: ['stable', 'beta'],
      official: true,
      created: '2025-03-01T10:00:00Z',
      kubernetes: '>=1.30.0 <1.33.0',
      kubernetesVersion: 'v1.32.4',
      kubelet: 'v1.32.4',
      upgradeFrom: '>=1.7.0',
      signature: { status: 'verified', format: 'cosign-legacy' },
    });
  });

  it('falls back to the most specific tag for the version and to no constraints', () => {
    const r = ok(releaseFromLabels(input(undefined)));
    assert.equal(r.version, '1.8.0-rev2-b1042');
    assert.deepEqual(r.channels, []);
    assert.equal(r.official, false);
    assert.equal(r.created, undefined);
    assert.equal(r.kubernetes, undefined);
    assert.equal(r.upgradeFrom, undefined);
  });

  it('ignores tags outside the scheme that point at the digest', () => {
    const r = ok(releaseFromLabels(input({}, ['latest', '1.9.0', 'sha256-abc.sig'])));
    assert.deepEqual(r.tags, ['1.9.0']);
    assert.equal(r.tag, '1.9.0');
  });

  it('marks a release official only for the exact text "true"', () => {
    for (const text of ['TRUE', 'True', ' true', 'yes', '1', '']) {
      assert.equal(
        ok(releaseFromLabels(input({ [ReleaseLabel.Official]: text }))).official,
        false,
        text,
      );
    }
    assert.equal(ok(releaseFromLabels(input({ [ReleaseLabel.Official]: 'true' }))).official, true);
  });

  it('keeps created as given, 1970 included, and uses the config field when the label is absent', () => {
    assert.equal(
      ok(releaseFromLabels(input({ [ReleaseLabel.Created]: '1970-01-01T00:00:00Z' }))).created,
      '1970-01-01T00:00:00Z',
    );
    assert.equal(
      ok(releaseFromLabels({ ...input({}), created: '2024-01-02T03:04:05Z' })).created,
      '2024-01-02T03:04:05Z',
    );
  });

  it('treats empty range labels as absent', () => {
    const r = ok(
      releaseFromLabels(input({ [ReleaseLabel.Kubernetes]: ' ', [ReleaseLabel.UpgradeFrom]: '' })),
    );
    assert.equal(r.kubernetes, undefined);
    assert.equal(r.upgradeFrom, undefined);
  });

  it('accepts a short version label that names the same app as the tag', () => {
    assert.equal(
      ok(releaseFromLabels(input({ [ReleaseLabel.Version]: 'v1.8.0' }))).version,
      'v1.8.0',
    );
  });

  describe('skips the digest, with a code and a reason', () => {
    const cases: readonly [string, Record<string, string>, string, RegExp][] = [
      [
        'an invalid Kubernetes range',
        { [ReleaseLabel.Kubernetes]: '>=1.30 <<2' },
        'MOLT_INVALID_RANGE',
        /dev\.molt\.kubernetes/,
      ],
      [
        'an invalid upgrade-from range',
        { [ReleaseLabel.UpgradeFrom]: 'latest' },
        'MOLT_INVALID_RANGE',
        /dev\.molt\.upgrade-from/,
      ],
      [
        'a carried Kubernetes version without its v',
        { [ReleaseLabel.KubernetesVersion]: '1.35.0' },
        'MOLT_INVALID_VERSION',
        /dev\.molt\.kubernetes\.version "1\.35\.0" is not a Kubernetes version like v1\.35\.0/,
      ],
      [
        'a kubelet version that is none',
        { [ReleaseLabel.KubeletVersion]: 'latest' },
        'MOLT_INVALID_VERSION',
        /molt\.dev\/kubelet-version "latest" is not a Kubernetes version like v1\.35\.4/,
      ],
      [
        'an invalid channel name',
        { [ReleaseLabel.Channels]: 'stable, be ta' },
        'MOLT_INVALID_CHANNEL',
        /"be ta"/,
      ],
      [
        'a version label that is not a version',
        { [ReleaseLabel.Version]: 'nightly' },
        'MOLT_INVALID_VERSION',
        /not a version/,
      ],
      [
        'a version label naming another app',
        { [ReleaseLabel.Version]: '2.0.0' },
        'MOLT_INVALID_VERSION',
        /disagrees/,
      ],
      [
        'a version label naming another revision',
        { [ReleaseLabel.Version]: '1.8.0-rev1' },
        'MOLT_INVALID_VERSION',
        /disagrees/,
      ],
    ];
    for (const [what, labels, code, reason] of cases) {
      it(`for ${what}`, () => {
        const s = skipped(releaseFromLabels(input(labels)));
        assert.equal(s.code, code);
        assert.match(s.reason, reason);
        assert.equal(s.digest, DIGEST);
        assert.equal(s.tag, '1.8.0-rev2-b1042');
      });
    }

    it('for a digest none of whose tags is a version', () => {
      const s = skipped(releaseFromLabels(input({}, ['latest'])));
      assert.equal(s.code, 'MOLT_INVALID_TAG');
      assert.equal(s.tag, 'latest');
    });
  });
});
