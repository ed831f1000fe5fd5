// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): tags and version strings, semver ranges, channel names
// and lists, Kubernetes versions, and a digest's tag list with its release labels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { satisfies } from 'semver';
import { fuzzParameters, fuzzText, outcome } from '../../testkit/fuzz.ts';
import { parseChannel, parseChannelList } from './channel.ts';
import { parseKubernetesVersion, parseRange } from './eligibility.ts';
import { releaseFromLabels } from './release-from-labels.ts';
import { ReleaseLabel } from './release.ts';
import { parseTag, parseVersion } from './tag.ts';

const tags = [
  '1.8.0',
  'v1.8.0-rev2',
  '1.8.0-rev2-b1042',
  '2.0.0-rc.1-rev3-b7.x',
  'latest',
  'sha256-0123456789abcdef0123456789abcdef.sig',
];
const ranges = ['>=1.30.0 <1.33.0', '^1.7.0', '1.x || >=2.1.0-rc.1', '~1.2.3', '*'];
const channels = ['stable', 'Stable, beta ,stable,', 'stable-4.18', 'a_b.c'];
const kubeVersions = ['v1.31.2', '1.30.1-eks-1234', '1.29.0+k3s1'];

describe('fuzz: release tags, versions, ranges and channels', () => {
  it('parseTag never throws; a version re-parses from its own tag text to the same version', () => {
    fc.assert(
      fc.property(fuzzText(tags, 140), (tag) => {
        const r = outcome(() => parseTag(tag));
        assert.ok(r.ok, 'parseTag reports, never throws');
        if (!r.value.ok) return;
        const again = parseTag(r.value.version.tag);
        assert.deepEqual(again, r.value);
        assert.ok(Number.isSafeInteger(r.value.version.rev) && r.value.version.rev >= 0);
      }),
      fuzzParameters(2_000),
    );
  });

  it('parseVersion returns what parseTag reads or throws MOLT_INVALID_VERSION', () => {
    fc.assert(
      fc.property(fuzzText(tags, 140), (text) => {
        const r = outcome(() => parseVersion(text));
        if (r.ok) assert.equal(parseVersion(r.value.tag).app, r.value.app);
        else assert.equal(r.error.code, 'MOLT_INVALID_VERSION');
      }),
      fuzzParameters(1_000),
    );
  });

  it('parseRange returns a range that tests any version without throwing, or null', () => {
    fc.assert(
      fc.property(fuzzText(ranges, 120), fc.constantFrom('1.8.0', '2.1.0-rc.1'), (text, v) => {
        const r = outcome(() => parseRange(text));
        assert.ok(r.ok, 'parseRange reports null, never throws');
        if (r.value !== null) assert.equal(typeof r.value.test(v), 'boolean');
        if (r.value !== null) assert.equal(typeof satisfies(v, r.value.range), 'boolean');
      }),
      fuzzParameters(1_000),
    );
  });

  it('channel names normalise idempotently; lists split every item into channels or invalid', () => {
    fc.assert(
      fc.property(fuzzText(channels, 80), (text) => {
        const one = outcome(() => parseChannel(text));
        if (one.ok) assert.equal(parseChannel(one.value), one.value);
        else assert.equal(one.error.code, 'MOLT_INVALID_CHANNEL');
        const list = outcome(() => parseChannelList(text));
        assert.ok(list.ok);
        for (const c of list.value.channels) assert.equal(parseChannel(c), c);
      }),
      fuzzParameters(1_000),
    );
  });

  it('parseKubernetesVersion returns major.minor.patch or throws MOLT_INVALID_VERSION', () => {
    fc.assert(
      fc.property(fuzzText(kubeVersions, 80), (text) => {
        const r = outcome(() => parseKubernetesVersion(text));
        if (r.ok) assert.match(r.value, /^\d+\.\d+\.\d+$/);
        else assert.equal(r.error.code, 'MOLT_INVALID_VERSION');
      }),
      fuzzParameters(1_000),
    );
  });

  it('releaseFromLabels reads any tag list and labels into a release or a skip, never a throw', () => {
    const labelValue = (valid: readonly string[]): fc.Arbitrary<string> => fuzzText(valid, 60);
    const labels = fc.record(
      {
        [ReleaseLabel.Version]: labelValue(tags),
        [ReleaseLabel.Created]: labelValue(['2025-03-01T10:00:00Z']),
        [ReleaseLabel.Channels]: labelValue(channels),
        [ReleaseLabel.Official]: labelValue(['true', 'false']),
        [ReleaseLabel.Kubernetes]: labelValue(ranges),
        [ReleaseLabel.UpgradeFrom]: labelValue(ranges),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.array(fuzzText(tags, 40), { maxLength: 6 }),
        fc.option(labels, { nil: undefined }),
        (tagList, l) => {
          const r = outcome(() =>
            releaseFromLabels({
              digest: `sha256:${'1'.repeat(64)}`,
              tags: tagList,
              labels: l,
              signature: { status: 'unsigned' },
            }),
          );
          assert.ok(r.ok, 'a bad release is skipped, never thrown');
          if (!r.value.ok) return;
          assert.ok(tagList.includes(r.value.release.tag));
          for (const c of r.value.release.channels) assert.equal(parseChannel(c), c);
        },
      ),
      fuzzParameters(1_000),
    );
  });
});
