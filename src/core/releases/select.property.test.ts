// SPDX-License-Identifier: Apache-2.0
// Invariants of selectLatest on random release sets, checked against a brute-force oracle.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { satisfies } from 'semver';
import { compareReleases, compareVersions, releaseVersion } from './order.ts';
import type { Release, SignatureState } from './release.ts';
import { selectLatest } from './select.ts';
import type { SelectOptions } from './select.ts';
import { parseVersion } from './tag.ts';

const VERSIONS = [
  '1.0.0',
  '1.1.0',
  '1.1.0-rev1',
  '1.1.0-rev2',
  '1.2.0-beta.1',
  '1.2.0',
  '1.3.0',
  '2.0.0-rc.1',
  '2.0.0',
];
// Narrow ranges (one minor) force multi-step paths; wide ones create shortcuts to skip.
const RANGES = [
  undefined,
  '>=1.1.0',
  '>=1.2.0',
  '<1.2.0',
  '^1.0.0',
  '1.1.x || 1.3.x',
  '>=2.0.0-0',
  '1.0.x',
  '1.1.x',
  '1.2.x',
  '1.3.x',
];
const K8S_RANGES = [undefined, '>=1.30.0', '<1.31.0', '>=1.29.0 <1.32.0'];
const SIGNATURES: SignatureState[] = [
  { status: 'verified', format: 'cosign-legacy' },
  { status: 'unsigned' },
  { status: 'invalid', reason: 'bad' },
  { status: 'unchecked' },
];

/** Mostly `common`, sometimes anything: most releases are eligible, so paths get long. */
const usually = <T>(common: T, all: readonly T[]): fc.Arbitrary<T> =>
  fc.oneof(
    { arbitrary: fc.constant(common), weight: 3 },
    { arbitrary: fc.constantFrom(...all), weight: 1 },
  );

const releaseArb = fc
  .record({
    tag: fc.constantFrom(...VERSIONS),
    channels: usually(['stable'], [['stable', 'beta'], ['beta'], []]),
    official: usually(true, [false]),
    kubernetes: usually(undefined, K8S_RANGES),
    upgradeFrom: fc.constantFrom(...RANGES),
    signature: usually(SIGNATURES[0]!, SIGNATURES),
  })
  .map((r): Omit<Release, 'digest'> => ({
    ...r,
    tags: [r.tag],
    version: r.tag,
    created: undefined,
  }));

const optionsArb = fc.record({
  releases: fc
    .array(releaseArb, { maxLength: 12 })
    .map((rs) =>
      rs.map((r, i): Release => ({ ...r, digest: `sha256:${String(i).padStart(64, '0')}` })),
    ),
  channel: usually('stable', ['beta']),
  current: fc.option(fc.constantFrom(...VERSIONS), { nil: undefined }),
  kubernetes: fc.option(fc.constantFrom('1.29.3', 'v1.30.0', '1.31.2'), { nil: undefined }),
  requireSignature: fc.boolean(),
});

const appOf = (r: Release): string => releaseVersion(r).app;

/** The rules written out naively, independent of eligibility.ts. */
function eligible(r: Release, o: SelectOptions): boolean {
  const newer =
    o.current === undefined || compareVersions(releaseVersion(r), parseVersion(o.current)) > 0;
  const k8s =
    o.kubernetes === undefined ||
    r.kubernetes === undefined ||
    satisfies(o.kubernetes.replace(/^v/, ''), r.kubernetes, { includePrerelease: true });
  const sig =
    r.signature.status === 'verified' ||
    (!(o.requireSignature ?? false) && r.signature.status !== 'invalid');
  return newer && r.channels.includes(o.channel) && r.official && k8s && sig;
}

const admits = (to: Release, fromApp: string): boolean =>
  to.upgradeFrom === undefined || satisfies(fromApp, to.upgradeFrom, { includePrerelease: true });

/** Fewest steps from the current version to each eligible release (breadth-first search). */
function distances(o: SelectOptions): Map<Release, number> {
  const nodes = o.releases.filter((r) => eligible(r, o));
  const dist = new Map<Release, number>();
  if (o.current === undefined) {
    for (const r of nodes) dist.set(r, 1);
    return dist;
  }
  const start = parseVersion(o.current);
  let frontier: { app: string; v: typeof start }[] = [{ app: start.app, v: start }];
  for (let d = 1; frontier.length > 0; d++) {
    const step = frontier.flatMap((u) =>
      nodes.filter(
        (r) => !dist.has(r) && compareVersions(u.v, releaseVersion(r)) < 0 && admits(r, u.app),
      ),
    );
    for (const r of step) dist.set(r, d);
    frontier = [...new Set(step)].map((r) => ({ app: appOf(r), v: releaseVersion(r) }));
  }
  return dist;
}

describe('selectLatest (properties)', () => {
  it('selects only eligible releases, along valid shortest paths, and nothing newer is reachable', () => {
    fc.assert(
      fc.property(optionsArb, (o) => {
        const s = selectLatest(o);
        const dist = distances(o);
        const newestReachable = [...dist.keys()].sort(compareReleases).at(-1);
        if (!s.found) {
          assert.equal(newestReachable, undefined, 'an eligible reachable release exists');
          return;
        }
        for (const r of s.path) assert.ok(eligible(r, o), `${r.tag} on the path is not eligible`);
        assert.equal(s.path.at(-1), s.release);
        assert.equal(
          compareReleases(s.release, newestReachable!),
          0,
          'a newer reachable release exists',
        );
        assert.equal(s.path.length, dist.get(s.release), 'the path is not the shortest');
        if (o.current !== undefined) {
          let from = parseVersion(o.current);
          for (const step of s.path) {
            assert.ok(admits(step, from.app), `${step.tag} does not admit ${from.app}`);
            assert.ok(compareVersions(releaseVersion(step), from) > 0, 'a step goes backwards');
            from = releaseVersion(step);
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('accounts for every release at or above the current version exactly once', () => {
    fc.assert(
      fc.property(optionsArb, (o) => {
        const s = selectLatest(o);
        const path = s.found ? s.path : [];
        const listed = [...path.map((r) => r.digest), ...s.rejected.map((r) => r.digest)];
        const expected = o.releases
          .filter(
            (r) =>
              o.current === undefined ||
              compareVersions(releaseVersion(r), parseVersion(o.current)) >= 0,
          )
          .map((r) => r.digest);
        assert.deepEqual([...listed].sort(), [...expected].sort());
        for (const rej of s.rejected) {
          const r = o.releases.find((x) => x.digest === rej.digest)!;
          assert.equal(
            eligible(r, o),
            ['Superseded', 'NotReachable'].includes(rej.code),
            `${rej.code} for ${r.tag}`,
          );
        }
      }),
      { numRuns: 300 },
    );
  });
});
