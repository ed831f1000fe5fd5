// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Release } from '../../core/releases/release.ts';
import type { Machine, Pool, Rollout } from '../../core/rollout/types.ts';
import { rolloutsToCreate, supersededBy } from './discovery.ts';
import { withdrawnRollouts } from './withdrawn.ts';

const release = (version: string, channels: string[], digestChar: string): Release => ({
  digest: `sha256:${digestChar.repeat(64)}`,
  tag: version,
  tags: [version],
  version,
  channels,
  official: true,
  created: undefined,
  kubernetes: undefined,
  upgradeFrom: undefined,
  signature: { status: 'unchecked' },
});
const r10 = release('1.0.0', ['stable'], 'a');
const r11 = release('1.1.0', ['stable'], 'b');
const machine = (id: string, digest: string, pool = 'workers'): Machine => ({
  id,
  role: 'worker',
  pool,
  labels: {},
  digest,
  version: undefined,
  available: true,
});
const pools: Pool[] = [{ name: 'workers', channel: 'stable', policies: [] }];
/** A rollout of the workers to release `r`. */
const rolloutTo = (id: string, r: Release, state: Rollout['state']): Rollout => ({
  id,
  pool: 'workers',
  target: { version: r.version, digest: r.digest },
  state,
  createdAt: 1,
  machines: {},
});

describe('rolloutsToCreate', () => {
  it('does not count a machine it has not seen: a pool on the release stays (R1)', () => {
    const unseen: Machine = { ...machine('w-2', ''), digest: undefined, available: false };
    const created = rolloutsToCreate({
      pools,
      releases: [r10],
      rollouts: [],
      machines: [machine('w-1', r10.digest), unseen],
      now: 7,
    });
    assert.deepEqual(created, []);
    // Nor does a pool none of whose machines was seen yet move.
    const none = rolloutsToCreate({
      pools,
      releases: [r10],
      rollouts: [],
      machines: [unseen],
      now: 7,
    });
    assert.deepEqual(none, []);
    // A seen machine on another release still starts one.
    const moves = rolloutsToCreate({
      pools,
      releases: [r11],
      rollouts: [],
      machines: [machine('w-1', r10.digest), unseen],
      now: 7,
    });
    assert.deepEqual(
      moves.map((r) => r.id),
      ['workers-1.1.0-bbbbbbbb'],
    );
  });

  it('creates one Active rollout to the newest release of the channel for a pool not on it', () => {
    const created = rolloutsToCreate({
      pools,
      releases: [r11, r10],
      rollouts: [],
      machines: [machine('w-1', r10.digest), machine('w-2', r11.digest)],
      now: 7,
    });
    assert.deepEqual(created, [
      {
        id: 'workers-1.1.0-bbbbbbbb',
        pool: 'workers',
        target: { version: '1.1.0', digest: r11.digest },
        state: 'Active',
        createdAt: 7,
        // What the pool ran before, named by the release list (the agent reported no version).
        from: { version: '1.0.0', digest: r10.digest },
        machines: {},
      },
    ]);
  });

  it('walks a multi-hop path one rollout per step: 1.6 never jumps to a 1.8 whose upgrade-from excludes it', () => {
    const r16 = release('1.6.0', ['stable'], '6');
    const r172 = { ...release('1.7.2', ['stable'], '7'), upgradeFrom: '>=1.6.0' };
    const r18 = { ...release('1.8.0', ['stable'], '8'), upgradeFrom: '>=1.7.0' };
    const releases = [r18, r172, r16];
    const first = rolloutsToCreate({
      pools,
      releases,
      rollouts: [],
      machines: [machine('w-1', r16.digest), machine('w-2', r16.digest)],
      now: 1,
    });
    assert.deepEqual(
      first.map((r) => [r.target.version, r.path, r.from?.version]),
      [['1.7.2', ['1.7.2', '1.8.0'], '1.6.0']],
    );
    // The step completed: the next pass takes the last step, a direct upgrade (no path).
    const done: Rollout = { ...first[0]!, state: 'Completed' };
    const second = rolloutsToCreate({
      pools,
      releases,
      rollouts: [done],
      machines: [machine('w-1', r172.digest), machine('w-2', r172.digest)],
      now: 2,
    });
    assert.deepEqual(
      second.map((r) => [r.target.version, r.path, r.from?.version]),
      [['1.8.0', undefined, '1.7.2']],
    );
    // The oldest machine decides where the path starts; a pinned one is left where it is.
    const pinned = { ...machine('w-3', r16.digest), pin: { version: '1.6.0', reason: 'x' } };
    const mixed = rolloutsToCreate({
      pools,
      releases,
      rollouts: [],
      machines: [machine('w-1', r172.digest), machine('w-2', r16.digest), pinned],
      now: 3,
    });
    assert.equal(mixed[0]?.target.version, '1.7.2');
    const onlyPinnedOld = rolloutsToCreate({
      pools,
      releases,
      rollouts: [],
      machines: [machine('w-1', r172.digest), pinned],
      now: 3,
    });
    assert.equal(onlyPinnedOld[0]?.target.version, '1.8.0');
  });

  it('never offers a pool a release blocked for it or for every pool; a newer one supersedes the halted rollout', () => {
    const r12 = release('1.2.0', ['stable'], 'c');
    const halted = rolloutTo('workers-1.2.0-cccccccc', r12, 'Halted');
    const machines = [machine('w-1', r11.digest)];
    const input = { pools, rollouts: [halted], machines, now: 2 };
    const block = { digest: r12.digest, reason: 'halted', by: 'operator', at: 1 };
    const forPool = [{ ...block, pool: 'workers' }];
    assert.deepEqual(rolloutsToCreate({ ...input, releases: [r12, r11], blocks: forPool }), []);
    assert.deepEqual(rolloutsToCreate({ ...input, releases: [r12, r11], blocks: [block] }), []);
    const elsewhere = [{ ...block, pool: 'db' }];
    const unblocked = rolloutsToCreate({
      ...input,
      rollouts: [],
      releases: [r12, r11],
      blocks: elsewhere,
    });
    assert.deepEqual(
      unblocked.map((r) => r.target.version),
      ['1.2.0'],
      'a block for another pool',
    );
    const r13 = release('1.3.0', ['stable'], 'd');
    const created = rolloutsToCreate({ ...input, releases: [r13, r12, r11], blocks: forPool });
    assert.deepEqual(
      created.map((r) => r.target.version),
      ['1.3.0'],
    );
    assert.deepEqual(supersededBy(created, [halted]), [
      { rollout: halted.id, reason: `superseded by ${created[0]!.id} (1.3.0)` },
    ]);
    // Still blocked: a pool that falls back below 1.3.0 (its rollout cancelled) is not offered it.
    const again = rolloutsToCreate({
      ...input,
      rollouts: [{ ...halted, state: 'Superseded' }],
      releases: [r12, r11],
      blocks: forPool,
    });
    assert.deepEqual(again, []);
  });

  it('walks a path around a blocked step, and never moves a pool back to an older release', () => {
    const r12 = release('1.2.0', ['stable'], 'c');
    const r13 = { ...release('1.3.0', ['stable'], 'd'), upgradeFrom: '>=1.2.0' };
    const r121 = { ...release('1.2.1', ['stable'], 'e'), upgradeFrom: '>=1.1.0' };
    const machines = [machine('w-1', r11.digest)];
    const input = { pools, rollouts: [], machines, now: 2, releases: [r13, r121, r12, r11] };
    const blocks = [{ digest: r121.digest, pool: 'workers', reason: 'bad', by: 'ops', at: 1 }];
    const [step] = rolloutsToCreate({ ...input, blocks });
    assert.equal(
      step?.target.version,
      '1.2.0',
      'the path goes through 1.2.0, not the blocked 1.2.1',
    );
    assert.deepEqual(step.path, ['1.2.0', '1.3.0']);
    // A pool on 1.3.0 whose release gets blocked is not offered 1.2.1 (a downgrade).
    const ahead = rolloutsToCreate({
      ...input,
      machines: [machine('w-1', r13.digest)],
      blocks: [{ ...blocks[0]!, digest: r13.digest }],
    });
    assert.deepEqual(ahead, []);
  });

  it('does not offer a promoted pool a release blocked for it', () => {
    const promotion: Pool[] = [
      { name: 'staging', channel: 'stable', policies: [] },
      { name: 'prod', promoteFrom: 'staging', policies: [] },
    ];
    const done: Rollout = { ...rolloutTo('s', r11, 'Completed'), pool: 'staging' };
    const base = {
      pools: promotion,
      releases: [r11, r10],
      machines: [machine('s-1', r11.digest, 'staging'), machine('p-1', r10.digest, 'prod')],
      rollouts: [done],
      now: 9,
    };
    assert.equal(rolloutsToCreate(base)[0]?.target.version, '1.1.0');
    const blocks = [{ digest: r11.digest, pool: 'prod', reason: 'no', by: 'ops', at: 1 }];
    assert.deepEqual(rolloutsToCreate({ ...base, blocks }), []);
  });

  it('repairs drift: a machine off the release its pool completed is brought back by a new rollout', () => {
    const done = rolloutTo('workers-1.1.0-bbbbbbbb', r11, 'Completed');
    const base = { pools, releases: [r11, r10], now: 5 };
    // w-2 was rolled back by hand (or re-imaged, or registered on 1.0.0).
    const machines = [machine('w-1', r11.digest), machine('w-2', r10.digest)];
    const repairs = rolloutsToCreate({ ...base, rollouts: [done], machines });
    assert.deepEqual(
      repairs.map((r) => [r.id, r.target.version, r.repairOf, r.from?.version]),
      [['workers-1.1.0-bbbbbbbb-r1', '1.1.0', done.id, '1.0.0']],
    );
    // A second drift after the repair completed: the next one.
    const repaired = { ...repairs[0]!, state: 'Completed' as const };
    const again = rolloutsToCreate({ ...base, rollouts: [done, repaired], machines });
    assert.deepEqual(
      again.map((r) => r.id),
      ['workers-1.1.0-bbbbbbbb-r2'],
    );
    // Not while a rollout of the pool runs, nor after a fleet rollback reversed the release.
    const running = { ...repaired, state: 'Active' as const };
    assert.deepEqual(rolloutsToCreate({ ...base, rollouts: [done, running], machines }), []);
    const back: Rollout = { ...done, id: 'back', target: { version: '1.0.0', digest: r10.digest } };
    const reversed = [done, { ...back, rollbackOf: done.id }];
    assert.deepEqual(rolloutsToCreate({ ...base, rollouts: reversed, machines }), []);
    // Once a rollback ended it RolledBack, the release is offered again only when a person lifted
    // the block the rollback set (here: none), as a new rollout, not a repair.
    const rolledBack = [
      { ...done, state: 'RolledBack' as const },
      { ...back, rollbackOf: done.id },
    ];
    const blocked = [
      { digest: r11.digest, pool: 'workers', reason: 'rolled back', by: 'x', at: 1 },
    ];
    assert.deepEqual(
      rolloutsToCreate({ ...base, rollouts: rolledBack, machines, blocks: blocked }),
      [],
    );
    assert.deepEqual(
      rolloutsToCreate({ ...base, rollouts: rolledBack, machines }).map((r) => [
        r.id,
        r.repairOf,
        r.from?.version,
      ]),
      [['workers-1.1.0-bbbbbbbb-r1', undefined, '1.0.0']],
    );
    // Nor for a machine pinned to where it is, or ahead of the release: nothing would start.
    const pinned = { ...machine('w-2', r10.digest), pin: { version: '1.0.0', reason: 'x' } };
    const ahead = { ...machine('w-3', 'sha256:' + '9'.repeat(64)), version: '1.9.0' };
    const stays = [machine('w-1', r11.digest), pinned, ahead];
    assert.deepEqual(rolloutsToCreate({ ...base, rollouts: [done], machines: stays }), []);
  });

  it('catches up a machine a pool with onHold: skip finished without, once its hold ends, and not before', () => {
    const done = rolloutTo('workers-1.1.0-bbbbbbbb', r11, 'Completed');
    const skipping = [{ ...pools[0]!, onHold: 'skip' as const }];
    const held = { ...machine('w-2', r10.digest), hold: { reason: 'x', until: 100 } };
    const machines = [machine('w-1', r11.digest), held];
    const base = { pools: skipping, releases: [r11, r10], rollouts: [done], machines };
    assert.deepEqual(rolloutsToCreate({ ...base, now: 50 }), [], 'held: no empty repair rollouts');
    assert.deepEqual(
      rolloutsToCreate({ ...base, now: 100 }).map((r) => [r.id, r.repairOf]),
      [['workers-1.1.0-bbbbbbbb-r1', done.id]],
    );
  });

  it("takes only releases whose Kubernetes range admits the cluster's version", () => {
    const r12 = { ...release('1.2.0', ['stable'], 'c'), kubernetes: '>=1.32.0' };
    const input = { pools, rollouts: [], machines: [machine('w-1', r10.digest)], now: 1 };
    const on131 = rolloutsToCreate({ ...input, releases: [r12, r11, r10], kubernetes: 'v1.31.2' });
    assert.deepEqual(
      on131.map((r) => r.target.version),
      ['1.1.0'],
    );
    const on132 = rolloutsToCreate({ ...input, releases: [r12, r11, r10], kubernetes: 'v1.32.0' });
    assert.deepEqual(
      on132.map((r) => r.target.version),
      ['1.2.0'],
    );
  });

  it('waits for approval where the pool requires it', () => {
    const created = rolloutsToCreate({
      pools: [{ ...pools[0]!, requireApproval: true }],
      releases: [r11],
      rollouts: [],
      machines: [machine('w-1', r10.digest)],
      now: 0,
    });
    assert.equal(created[0]?.state, 'AwaitingApproval');
  });

  it('creates nothing when every machine runs the release, or a rollout to it exists (even halted)', () => {
    const base = { pools, releases: [r11], now: 0 };
    assert.deepEqual(
      rolloutsToCreate({ ...base, rollouts: [], machines: [machine('w-1', r11.digest)] }),
      [],
    );
    const halted = rolloutTo('x', r11, 'Halted');
    assert.deepEqual(
      rolloutsToCreate({ ...base, rollouts: [halted], machines: [machine('w-1', r10.digest)] }),
      [],
    );
  });

  it('lets a running rollout end before starting one to a newer release', () => {
    const running = rolloutTo('old', r10, 'Paused');
    const created = rolloutsToCreate({
      pools,
      releases: [r11, r10],
      rollouts: [running],
      machines: [machine('w-1', 'sha256:' + '0'.repeat(64))],
      now: 0,
    });
    assert.deepEqual(created, []);
  });

  it('ignores pools without a channel and channels without a release', () => {
    const created = rolloutsToCreate({
      pools: [
        { name: 'workers', policies: [] },
        { name: 'edge', channel: 'beta', policies: [] },
      ],
      releases: [r11],
      rollouts: [],
      machines: [machine('w-1', r10.digest), machine('e-1', r10.digest, 'edge')],
      now: 0,
    });
    assert.deepEqual(created, []);
  });

  it('waits until a release is as old as the pool asks, counted from when it was first seen', () => {
    const soaking: Pool[] = [{ ...pools[0]!, minReleaseAgeMs: 60_000 }];
    const base = {
      pools: soaking,
      releases: [r11],
      rollouts: [],
      machines: [machine('w-1', r10.digest)],
    };
    const firstSeen = new Map([[r11.digest, 1_000]]);
    assert.deepEqual(rolloutsToCreate({ ...base, firstSeen, now: 60_999 }), []);
    assert.equal(rolloutsToCreate({ ...base, firstSeen, now: 61_000 }).length, 1);
    assert.deepEqual(
      rolloutsToCreate({ ...base, now: 61_000 }),
      [],
      'never seen before: the soak starts now',
    );
  });

  it('promotes what another pool completed, not what the channel offers', () => {
    const promotion: Pool[] = [
      { name: 'staging', channel: 'stable', policies: [] },
      {
        name: 'prod',
        promoteFrom: 'staging',
        policies: [],
        phased: { startFraction: 0.1, durationMs: 3_600_000 },
      },
    ];
    const done = (target: Release, state: Rollout['state'], createdAt: number): Rollout => ({
      id: `staging-${target.version}`,
      pool: 'staging',
      target: { version: target.version, digest: target.digest },
      state,
      createdAt,
      machines: {},
    });
    const machines = [
      machine('s-1', r11.digest, 'staging'),
      machine('p-1', 'sha256:' + '0'.repeat(64), 'prod'),
    ];
    const base = { pools: promotion, releases: [r11, r10], machines, now: 9 };
    assert.deepEqual(
      rolloutsToCreate({ ...base, rollouts: [done(r11, 'Active', 2)] }),
      [],
      'staging not done yet',
    );
    const created = rolloutsToCreate({
      ...base,
      rollouts: [done(r10, 'Completed', 1), done(r11, 'Halted', 2)],
    });
    assert.equal(created.length, 1);
    assert.equal(created[0]?.pool, 'prod');
    assert.equal(created[0].target.digest, r10.digest, 'the newest completed, not the halted one');
    assert.deepEqual(
      created[0].phased,
      { startFraction: 0.1, durationMs: 3_600_000 },
      'phased from the pool',
    );
  });

  it('names Active rollouts whose release disappeared or left the channel, nothing else', () => {
    const active = (id: string, target: Release, state: Rollout['state'] = 'Active'): Rollout => ({
      id,
      pool: 'workers',
      target: { version: target.version, digest: target.digest },
      state,
      createdAt: 0,
      machines: {},
    });
    const unlisted = release('1.2.0', ['beta'], 'c');
    const gone = release('1.3.0', ['stable'], 'd');
    const found = withdrawnRollouts({
      pools,
      releases: [r11, unlisted],
      rollouts: [
        active('ok', r11),
        active('moved', unlisted),
        active('gone', gone),
        active('paused', gone, 'Paused'),
      ],
    });
    assert.deepEqual(
      found.map((w) => [w.rollout, /disappeared/.test(w.reason) ? 'gone' : 'withdrawn']),
      [
        ['moved', 'withdrawn'],
        ['gone', 'gone'],
      ],
    );
  });

  it('names a Cluster API update in a pool with no channel whose release became unofficial or left every channel', () => {
    const cp: Pool = { name: 'cp', policies: [] };
    const to = (id: string, r: Release, over: Partial<Rollout> = {}): Rollout => ({
      ...rolloutTo(id, r, 'Active'),
      pool: 'cp',
      only: ['cp-1'],
      ...over,
    });
    const unofficial = { ...release('1.2.0', ['stable'], 'c'), official: false };
    const nowhere = release('1.3.0', [], 'd');
    const found = withdrawnRollouts({
      pools: [cp],
      releases: [r11, unofficial, nowhere],
      rollouts: [
        to('ok', r11),
        to('unofficial', unofficial),
        to('nowhere', nowhere),
        // What discovery itself moves such a pool to (promoted) and rollbacks are not its concern.
        { ...rolloutTo('machines', unofficial, 'Active'), pool: 'cp' },
        to('back', nowhere, { rollbackOf: 'x' }),
      ],
    });
    assert.deepEqual(found, [
      { rollout: 'unofficial', reason: 'release 1.2.0 was withdrawn (not official)' },
      { rollout: 'nowhere', reason: 'release 1.3.0 was withdrawn (in no channel)' },
    ]);
  });

  it('names an Active rollout whose release was blocked for its pool or every pool', () => {
    const active = (id: string, pool: string): Rollout => ({
      ...rolloutTo(id, r11, 'Active'),
      pool,
    });
    const found = withdrawnRollouts({
      pools: [...pools, { name: 'db', channel: 'stable', policies: [] }],
      releases: [r11],
      rollouts: [active('w', 'workers'), active('d', 'db')],
      blocks: [{ digest: r11.digest, pool: 'workers', reason: 'CVE-1', by: 'ops', at: 1 }],
    });
    assert.deepEqual(found, [{ rollout: 'w', reason: 'release 1.1.0 was blocked by ops: CVE-1' }]);
    const everywhere = withdrawnRollouts({
      pools,
      releases: [r11],
      rollouts: [active('w', 'workers'), active('d', 'db')],
      blocks: [{ digest: r11.digest, reason: 'CVE-1', by: 'ops', at: 1 }],
    });
    assert.deepEqual(
      everywhere.map((w) => w.rollout),
      ['w', 'd'],
    );
  });
});
