// SPDX-License-Identifier: Apache-2.0
// Which image rollouts exist (docs/adr/0013 decision 9), the image planner's snapshot, and the
// rollback of an image rollout: pure, over the image fixtures.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { plan } from '../rollout/plan.ts';
import type { Rollout } from '../rollout/types.ts';
import { dig, MIN, policy, REPO, repo, T0, workload } from './fixtures.test.ts';
import { planningInput } from './plan-input.ts';
import { imageRollbackOf } from './rollback.ts';
import { imageRolloutId, rolloutChanges, type PolicyState } from './rollouts.ts';
import { imageSnapshot } from './snapshot.ts';
import { resolveTarget, type TargetDecision } from './target.ts';
import type { ImagePolicy } from './types.ts';
import { selectUnits, type WorkloadView } from './units.ts';

const at = (d: number): string => `${REPO}:1.8.0-rev2@${dig(d)}`;

function stateOf(
  p: ImagePolicy,
  workloads: readonly WorkloadView[],
  o: { tags?: Record<string, string>; rollouts?: readonly Rollout[]; scan?: false } = {},
): PolicyState {
  const view = repo(o.tags ?? { '1.8.0-rev2': dig(2) });
  const { units } = selectUnits([p], workloads);
  const decisions = new Map<string, TargetDecision>(
    units.map((u) => [
      u.id,
      resolveTarget(p, u.workload.containers[0]?.image ?? '', view, { platforms: [], now: T0 }),
    ]),
  );
  return {
    policy: p,
    units,
    decisions,
    scan: o.scan === false ? undefined : view,
    rollouts: o.rollouts ?? [],
    now: T0,
  };
}

const changesOf = (s: PolicyState) => rolloutChanges(s, planningInput(s));
const id2 = imageRolloutId('web', '1.8.0-rev2', dig(2));

function rolloutTo(d: number, over: Partial<Rollout> = {}): Rollout {
  return {
    id: imageRolloutId('web', '1.8.0-rev2', dig(d)),
    pool: 'web/1.8.0-rev2',
    target: { version: '1.8.0-rev2', digest: dig(d) },
    state: 'Active',
    createdAt: T0 - MIN,
    machines: {},
    images: { policy: 'web', repository: REPO, units: {} },
    ...over,
  };
}

describe('rolloutChanges', () => {
  it('creates one rollout per target, recording the digest the units ran', () => {
    const c = changesOf(stateOf(policy(), [workload('a'), workload('b')]));
    assert.deepEqual(c.supersede, []);
    assert.deepEqual(c.missing, []);
    assert.deepEqual(c.create, [
      {
        id: id2,
        pool: 'web/1.8.0-rev2',
        target: { version: '1.8.0-rev2', digest: dig(2) },
        state: 'Active',
        createdAt: T0,
        machines: {},
        from: { version: '1.8.0-rev2', digest: dig(1) },
        images: { policy: 'web', repository: REPO, units: {} },
      },
    ]);
    assert.equal(id2, `img-web-1.8.0-rev2-${'0'.repeat(8)}`);
  });

  it('waits for approval when the policy asks for it', () => {
    const c = changesOf(stateOf(policy({ requireApproval: true }), [workload('a')]));
    assert.equal(c.create[0]?.state, 'AwaitingApproval');
  });

  it('creates nothing while a rollout to the target lives, or after one halted, was cancelled or superseded', () => {
    for (const state of ['Active', 'Paused', 'Halted', 'Cancelled', 'Superseded'] as const) {
      const c = changesOf(
        stateOf(policy(), [workload('a')], { rollouts: [rolloutTo(2, { state })] }),
      );
      assert.deepEqual(c.create, [], state);
    }
  });

  it('creates nothing for a completed target a person rolled back, in any state of the rollback', () => {
    const done = rolloutTo(2, { state: 'Completed' });
    for (const state of ['Active', 'Completed'] as const) {
      const back = rolloutTo(1, { id: `${id2}-rollback`, rollbackOf: id2, state });
      const c = changesOf(stateOf(policy(), [workload('a')], { rollouts: [done, back] }));
      assert.deepEqual(c.create, [], state);
      assert.deepEqual(c.supersede, [], `${state}: the rollback is not superseded by a repair`);
    }
  });

  it('repairs a completed rollout when a unit moves to its target again', () => {
    const done = rolloutTo(2, { state: 'Completed' });
    const c = changesOf(stateOf(policy(), [workload('a')], { rollouts: [done] }));
    assert.deepEqual(
      c.create.map((r) => [r.id, r.repairOf]),
      [[`${id2}-r1`, id2]],
    );
  });

  it('supersedes a live rollout of the same tag when the tag moves on', () => {
    const old = rolloutTo(2);
    const c = changesOf(
      stateOf(policy(), [workload('a', { containers: [{ name: 'web', image: at(2) }] })], {
        tags: { '1.8.0-rev2': dig(3) },
        rollouts: [old],
      }),
    );
    assert.deepEqual(
      c.supersede.map((s) => s.rollout),
      [old.id],
    );
    assert.match(c.supersede[0]?.reason ?? '', /^superseded by img-web-1\.8\.0-rev2-/);
  });

  it('pauses an Active rollout whose tag is gone from the registry, not when the registry was not read', () => {
    const live = rolloutTo(2);
    const gone = changesOf(stateOf(policy(), [workload('a')], { tags: {}, rollouts: [live] }));
    assert.deepEqual(
      gone.missing.map((m) => m.rollout),
      [live.id],
    );
    assert.match(gone.missing[0]?.reason ?? '', /^MOLT_IMAGE_MISSING: .*1\.8\.0-rev2 is no longer/);
    const unread = changesOf(
      stateOf(policy(), [workload('a')], { tags: {}, rollouts: [live], scan: false }),
    );
    assert.deepEqual(unread.missing, []);
  });
});

describe('imageSnapshot', () => {
  const canary = policy({
    workloads: [{ namespaces: ['shop', 'canary'] }],
    canary: { namespaces: ['canary'], soakMs: 10 * MIN },
  });

  it('keeps a unit that already moved a member of its rollout, so the rollout completes', () => {
    const moved = workload('a', { containers: [{ name: 'web', image: at(2) }] });
    const r = rolloutTo(2, {
      machines: {
        'Deployment/shop/a': { phase: 'Succeeded', startedAt: T0 - MIN, finishedAt: T0 - MIN },
      },
      images: {
        policy: 'web',
        repository: REPO,
        units: { 'Deployment/shop/a': { changes: [{ container: 'web', from: at(1), to: at(2) }] } },
      },
    });
    const snap = imageSnapshot(stateOf(policy(), [moved], { rollouts: [r] }), []);
    assert.deepEqual(
      snap.machines.map((m) => [m.id, m.pool, m.digest]),
      [['Deployment/shop/a', 'web/1.8.0-rev2', dig(2)]],
    );
    assert.equal(plan(snap, T0).rollouts[0]?.verdict, 'complete');
  });

  it('holds the others while an unavailable canary has not started, instead of taking one as the canary', () => {
    const fleet = [
      workload('a'),
      workload('b'),
      workload('z', { namespace: 'canary', available: false }),
    ];
    const snap = imageSnapshot(stateOf(canary, fleet, { rollouts: [rolloutTo(2)] }), []);
    const decided = plan(snap, T0);
    assert.deepEqual(
      decided.decisions.filter((d) => d.action === 'start').map((d) => d.machine),
      [],
    );
    const held = decided.decisions.find((d) => d.machine === 'Deployment/shop/a');
    assert.match(held?.reason?.message ?? '', /canary Deployment\/canary\/z is not available/);
  });

  it('starts the canary alone first when it is available', () => {
    const fleet = [workload('a'), workload('b'), workload('z', { namespace: 'canary' })];
    const snap = imageSnapshot(stateOf(canary, fleet, { rollouts: [rolloutTo(2)] }), []);
    assert.deepEqual(
      plan(snap, T0)
        .decisions.filter((d) => d.action === 'start')
        .map((d) => d.machine),
      ['Deployment/canary/z'],
    );
  });

  it('lets a rollback put back a workload that is not available', () => {
    const broken = workload('a', { containers: [{ name: 'web', image: at(3) }], available: false });
    const back = rolloutTo(1, {
      id: 'x-rollback',
      rollbackOf: 'x',
      images: {
        policy: 'web',
        repository: REPO,
        units: { 'Deployment/shop/a': { changes: [{ container: 'web', from: at(3), to: at(1) }] } },
      },
    });
    const snap = imageSnapshot(
      stateOf(policy(), [broken], { tags: { '1.8.0-rev2': dig(3) }, rollouts: [back] }),
      [],
    );
    assert.deepEqual(
      plan(snap, T0)
        .decisions.filter((d) => d.action === 'start')
        .map((d) => d.machine),
      ['Deployment/shop/a'],
    );
  });

  it("counts a policy's concurrency over all its tags, not per tag", () => {
    const limited = policy({ policies: [{ kind: 'concurrency', limit: { count: 1 } }] });
    const on19 = [{ name: 'web', image: `${REPO}:1.9.0-rev1@${dig(3)}` }];
    const fleet = [workload('a'), workload('b', { containers: on19 })];
    const r19 = rolloutTo(4, {
      id: 'img-web-1.9.0-rev1-4',
      pool: 'web/1.9.0-rev1',
      target: { version: '1.9.0-rev1', digest: dig(4) },
    });
    const s = stateOf(limited, fleet, {
      tags: { '1.8.0-rev2': dig(2), '1.9.0-rev1': dig(4) },
      rollouts: [rolloutTo(2), r19],
    });
    const snap = imageSnapshot(s, []);
    assert.deepEqual(
      snap.pools.map((p) => [p.name, p.policies]),
      [
        ['web/1.8.0-rev2', []],
        ['web/1.9.0-rev1', []],
      ],
    );
    const starts = plan(snap, T0).decisions.filter((d) => d.action === 'start');
    assert.equal(starts.length, 1, JSON.stringify(starts));
  });

  it('leaves ended rollouts out, and carries only the starts it is given', () => {
    const snap = imageSnapshot(
      stateOf(policy(), [workload('a')], { rollouts: [rolloutTo(2, { state: 'Superseded' })] }),
      [],
    );
    assert.deepEqual([snap.rollouts.length, snap.machines.length, snap.pools.length], [0, 0, 0]);
  });
});

describe('imageRollbackOf', () => {
  it('reverses the changes of the units the rollout changed, and only those', () => {
    const change = (d: number) => [{ container: 'web', from: at(1), to: at(d) }];
    const original = rolloutTo(3, {
      state: 'Halted',
      from: { version: '1.8.0-rev2', digest: dig(1) },
      machines: {
        'Deployment/shop/a': { phase: 'Failed', startedAt: T0, finishedAt: T0 },
        'Deployment/shop/b': { phase: 'Succeeded', startedAt: T0, finishedAt: T0 },
        'Deployment/shop/c': { phase: 'Skipped', startedAt: T0, finishedAt: T0 },
      },
      images: {
        policy: 'web',
        repository: REPO,
        units: {
          'Deployment/shop/a': { changes: change(3) },
          'Deployment/shop/b': { changes: change(3) },
          'Deployment/shop/c': { changes: change(3) },
          'Deployment/shop/d': { changes: change(3) },
        },
      },
    });
    const back = imageRollbackOf(
      { ...original, images: original.images ?? { policy: '', repository: '', units: {} } },
      T0,
    );
    assert.equal(back.rollbackOf, original.id);
    assert.deepEqual(back.target, { version: '1.8.0-rev2', digest: dig(1) });
    assert.deepEqual(back.images?.units, {
      'Deployment/shop/a': { changes: [{ container: 'web', from: at(3), to: at(1) }] },
      'Deployment/shop/b': { changes: [{ container: 'web', from: at(3), to: at(1) }] },
    });
  });
});
