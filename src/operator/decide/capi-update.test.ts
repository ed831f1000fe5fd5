// SPDX-License-Identifier: Apache-2.0
// Cluster API's UpdateMachine as molt answers it (docs/adr/0014): the release carrying the desired
// Kubernetes version, one targeted rollout recorded once, and the answer read from it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Release } from '../../core/releases/release.ts';
import { plan } from '../../core/rollout/plan.ts';
import type { Pool, Rollout } from '../../core/rollout/types.ts';
import { capiRolloutId, capiUpdate, releaseCarrying, type CapiUpdateInput } from './capi-update.ts';
import { d10, d11, release, w1 } from './fixtures.test.ts';

const pool: Pool = { name: 'workers', channel: 'stable', policies: [] };
const carrying = (v: string, k: string, digest: string) => ({
  ...release(v, digest),
  kubernetesVersion: k,
});
const releases = [carrying('1.1.0', 'v1.35.0', d11), carrying('1.0.0', 'v1.34.2', d10)];

const input = (over: Partial<CapiUpdateInput> = {}): CapiUpdateInput => ({
  machine: w1,
  version: 'v1.35.0',
  pool,
  releases,
  rollouts: [],
  blocks: [],
  booted: d10,
  now: 1_000,
  ...over,
});

const recorded = (over: Partial<Rollout> = {}): Rollout => {
  const r = capiUpdate(input()).create;
  assert.ok(r);
  return { ...r, ...over };
};

describe('capiUpdate', () => {
  it('records one targeted rollout of the machine to the release carrying the version', () => {
    const out = capiUpdate(input());
    assert.equal(out.answer.state, 'in-progress');
    assert.deepEqual(out.create, {
      id: capiRolloutId('w-1', 'v1.35.0'),
      pool: 'workers',
      target: { version: '1.1.0', digest: d11 },
      state: 'Active',
      createdAt: 1_000,
      machines: {},
      only: ['w-1'],
    });
  });

  it('creates nothing when asked again, and says where the machine is', () => {
    const r = recorded();
    const again = capiUpdate(input({ rollouts: [r] }));
    assert.equal(again.create, undefined);
    assert.match(again.answer.message, /waiting for the pool's policies/);
    const flying = recorded({ machines: { 'w-1': { phase: 'InFlight', startedAt: 1 } } });
    assert.match(capiUpdate(input({ rollouts: [flying] })).answer.message, /^upgrading to 1\.1\.0/);
  });

  it('is done once the machine succeeded and its agent booted on the release', () => {
    const done = recorded({
      machines: { 'w-1': { phase: 'Succeeded', startedAt: 1, finishedAt: 2 } },
    });
    assert.equal(capiUpdate(input({ rollouts: [done] })).answer.state, 'in-progress');
    assert.deepEqual(capiUpdate(input({ rollouts: [done], booted: d11 })).answer, {
      state: 'done',
      message: 'booted on 1.1.0',
    });
  });

  it('fails, saying so, when the machine rolled back by itself', () => {
    const back = recorded({
      machines: {
        'w-1': { phase: 'RolledBack', startedAt: 1, finishedAt: 2, reason: 'kubelet not ready' },
      },
    });
    assert.deepEqual(capiUpdate(input({ rollouts: [back] })).answer, {
      state: 'failed',
      message: 'w-1 failed on 1.1.0 and rolled back by itself: kubelet not ready',
      machineFailed: true,
    });
  });

  it('fails without changing anything for an unknown machine, a version no release carries, or a blocked one', () => {
    assert.deepEqual(capiUpdate(input({ machine: undefined })), {
      answer: { state: 'failed', message: 'not a machine molt manages' },
    });
    const none = capiUpdate(input({ version: 'v1.36.0' }));
    assert.equal(none.create, undefined);
    assert.match(none.answer.message, /no release carries Kubernetes v1\.36\.0/);
    assert.equal(none.answer.machineFailed, undefined, 'not the machine’s failure');
    const blocked = capiUpdate(
      input({ blocks: [{ digest: d11, reason: 'bad', by: 'alice', at: 1 }] }),
    );
    assert.equal(blocked.answer.state, 'failed');
  });

  describe('takes only a release discovery would offer, as one step from what the machine runs', () => {
    const d12 = `sha256:${'c'.repeat(64)}`;
    const loose: Pool = { name: 'workers', policies: [] };
    // The machine runs 1.0.0 (d10); 1.1.0 is the only release carrying v1.35.0.
    const only = (over: Partial<Release>) => [
      { ...carrying('1.1.0', 'v1.35.0', d11), ...over },
      carrying('1.0.0', 'v1.34.2', d10),
    ];
    const refusals: [string, Partial<CapiUpdateInput>, RegExp][] = [
      [
        'in no channel (a pool without one)',
        { pool: loose, releases: only({ channels: [] }) },
        /1\.1\.0 in no channel/,
      ],
      ['in another channel', { releases: only({ channels: ['beta'] }) }, /not in channel stable/],
      ['unofficial', { pool: loose, releases: only({ official: false }) }, /not marked official/],
      [
        'with an invalid signature',
        { releases: only({ signature: { status: 'invalid', reason: 'forged' } }) },
        /signature invalid: forged/,
      ],
      [
        'unchecked while signatures are required',
        { requireSignature: true, releases: only({ signature: { status: 'unchecked' } }) },
        /signature not checked/,
      ],
      [
        'unsigned while signatures are required',
        { requireSignature: true, releases: only({ signature: { status: 'unsigned' } }) },
        /not signed/,
      ],
      [
        'whose upgrade-from range excludes the machine',
        { pool: loose, releases: only({ upgradeFrom: '>=99' }) },
        /upgrade-from range >=99 excludes 1\.0\.0/,
      ],
      [
        'older than the machine runs',
        { releases: [...only({}), release('1.2.0', d12)], booted: d12 },
        /not newer than the current 1\.2\.0/,
      ],
      [
        'whose Kubernetes range excludes the version it carries',
        { releases: only({ kubernetes: '>=1.36.0' }) },
        /supports Kubernetes >=1\.36\.0/,
      ],
      [
        'to a machine whose release is not known yet',
        { booted: undefined },
        /the release it runs is not known yet/,
      ],
    ];
    for (const [what, over, why] of refusals)
      it(`refuses a release ${what}, saying why and recording nothing`, () => {
        const out = capiUpdate(input(over));
        assert.equal(out.create, undefined);
        assert.equal(out.answer.state, 'failed');
        assert.match(out.answer.message, why);
        assert.equal(out.answer.machineFailed, undefined, 'not the machine’s failure');
      });

    it('still takes an eligible one: signed when required, admitted by its range, in some channel', () => {
      const signed = only({
        signature: { status: 'verified', format: 'sigstore-bundle' },
        upgradeFrom: '>=1.0.0',
      });
      for (const p of [pool, loose]) {
        const out = capiUpdate(input({ pool: p, requireSignature: true, releases: signed }));
        assert.deepEqual(out.create?.target, { version: '1.1.0', digest: d11 });
      }
    });

    it('passes over a newer ineligible release to an older eligible one carrying the version', () => {
      const rebuilt = { ...carrying('1.1.1', 'v1.35.0', d12), official: false };
      const out = capiUpdate(input({ releases: [rebuilt, ...releases] }));
      assert.deepEqual(out.create?.target, { version: '1.1.0', digest: d11 });
    });

    it('counts the version the agent reported when its digest is no listed release', () => {
      const out = capiUpdate(input({ booted: d12, bootedVersion: '1.2.0' }));
      assert.equal(out.create, undefined);
      assert.match(out.answer.message, /not newer than the current 1\.2\.0/);
    });
  });

  it('is done at once for a machine already on the release', () => {
    const out = capiUpdate(input({ booted: d11 }));
    assert.deepEqual([out.answer.state, out.create], ['done', undefined]);
  });

  it('offers the release machines already run when each carries the version, so none is replaced', () => {
    const rules = { blocks: [], from: [{ digest: d11 }, { digest: d11 }] };
    assert.deepEqual(releaseCarrying('v1.35.0', pool, releases, rules), { release: releases[0] });
    // One machine of the set still on the older release: the usual one-step eligibility decides.
    const mixed = { blocks: [], from: [{ digest: d11 }, { digest: d10 }] };
    assert.deepEqual(releaseCarrying('v1.35.0', pool, releases, mixed), { release: releases[0] });
    const older = releaseCarrying('v1.34.2', pool, releases, mixed);
    assert.ok('refused' in older, 'a downgrade is never offered in place');
  });

  it('plans only the targeted machine of its pool', () => {
    const r = recorded();
    const machines = ['w-1', 'w-2'].map((id) => ({
      id,
      role: 'worker' as const,
      pool: 'workers',
      labels: {},
      digest: d10,
      version: '1.0.0',
      available: true,
    }));
    const p = plan(
      { machines, pools: [pool], fleetPolicies: [], rollouts: [r], starts: [] },
      1_000,
    );
    assert.deepEqual(p.decisions.map((d) => [d.machine, d.action]).sort(), [
      ['w-1', 'start'],
      ['w-2', 'skipped'],
    ]);
  });
});
