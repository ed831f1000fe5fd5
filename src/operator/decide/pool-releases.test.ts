// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Release } from '../../core/releases/release.ts';
import type { Machine, Pool, Rollout } from '../../core/rollout/types.ts';
import { poolReleases } from './pool-releases.ts';
import { release as stable } from './fixtures.test.ts';

const release = (version: string, c: string, over: Partial<Release> = {}): Release => ({
  ...stable(version, `sha256:${c.repeat(64)}`),
  ...over,
});
const r16 = release('1.6.0', 'a');
const r172 = release('1.7.2', 'b');
const r18 = release('1.8.0', 'c', { upgradeFrom: '>=1.7.0' });
const r19 = release('1.9.0', 'd', { kubernetes: '>=1.33.0' });
const on = (digest: string, pool = 'workers'): Machine => ({
  ...{ id: `m-${pool}`, role: 'worker', pool, labels: {}, digest },
  ...{ version: undefined, available: true },
});
const workers: Pool = { name: 'workers', channel: 'stable', policies: [] };

describe('poolReleases', () => {
  it('names the next step of the path and every newer release passed over, with the reason', () => {
    const [w] = poolReleases({
      pools: [workers],
      releases: [r19, r18, r172, r16],
      rollouts: [],
      machines: [on(r16.digest)],
      blocks: [{ digest: r172.digest, pool: 'db', reason: 'other pool', by: 'ops', at: 1 }],
      kubernetes: 'v1.31.0',
      now: 0,
    });
    assert.equal(w?.current, '1.6.0');
    assert.deepEqual(w.next, { version: '1.7.2', digest: r172.digest, path: ['1.7.2', '1.8.0'] });
    assert.deepEqual(
      w.notTaken.map((n) => [n.version, n.code]),
      [['1.9.0', 'KubernetesIncompatible']],
    );
  });

  it('says a blocked step is blocked and by whom, and when a release is too young', () => {
    const [w] = poolReleases({
      pools: [{ ...workers, minReleaseAgeMs: 60_000 }],
      releases: [r18, r172, r16],
      rollouts: [],
      machines: [on(r16.digest)],
      blocks: [{ digest: r172.digest, reason: 'CVE-1', by: 'ops', at: 1 }],
      firstSeen: new Map([[r16.digest, 0]]),
      now: 1_000,
    });
    assert.ok(w !== undefined);
    assert.deepEqual(
      w.notTaken.map((n) => [n.version, n.code]),
      [
        ['1.7.2', 'Blocked'],
        ['1.8.0', 'NotReachable'],
      ],
    );
    assert.equal(w.notTaken[0]?.reason, 'blocked by ops: CVE-1');
    assert.match(w.notTaken[1]?.reason ?? '', /1\.6\.0/);
    assert.equal(w.next, undefined);
    assert.match(w.none ?? '', /./);
    const young = poolReleases({
      pools: [{ ...workers, minReleaseAgeMs: 60_000 }],
      releases: [r172, r16],
      rollouts: [],
      machines: [on(r16.digest)],
      now: 1_000,
    })[0];
    assert.equal(young?.next?.notBefore, new Date(61_000).toISOString());
  });

  it('follows a promoted pool, unless what it promotes is blocked for it', () => {
    const done: Rollout = {
      ...{ id: 's', pool: 'staging', target: { version: '1.7.2', digest: r172.digest } },
      ...{ state: 'Completed', createdAt: 1, machines: {} },
    };
    const pools: Pool[] = [workers, { name: 'prod', promoteFrom: 'staging', policies: [] }];
    const base = { pools, releases: [r172], rollouts: [done], machines: [], now: 2 };
    assert.deepEqual(poolReleases(base)[1]?.next, done.target);
    const blocked = poolReleases({
      ...base,
      blocks: [{ digest: r172.digest, pool: 'prod', reason: 'no', by: 'ops', at: 1 }],
    })[1];
    assert.equal(blocked?.next, undefined);
    assert.equal(blocked?.notTaken[0]?.code, 'Blocked');
    assert.match(
      poolReleases({ ...base, rollouts: [] })[1]?.none ?? '',
      /staging completed no rollout/,
    );
  });
});
