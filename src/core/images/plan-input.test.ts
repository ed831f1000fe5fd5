// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { plan } from '../rollout/plan.ts';
import type { FleetSnapshot, MachineProgress, Plan, Rollout } from '../rollout/types.ts';
import { validatePolicies } from '../rollout/validate.ts';
import { dig, HOUR, MIN, policy, REPO, repo, T0, workload } from './fixtures.test.ts';
import { CANARY_LABEL, planningInput, type PlanningInput } from './plan-input.ts';
import { resolveTarget, type TargetDecision } from './target.ts';
import type { ImagePolicy } from './types.ts';
import { selectUnits, type WorkloadView } from './units.ts';

/** 1.8.0-rev2 rebuilt: dig 1 → dig 2. 1.9.0-rev1 rebuilt: dig 3 → dig 4. */
const view = repo({ '1.8.0-rev2': dig(2), '1.9.0-rev1': dig(4), '1.9.0': dig(4) });
const on = (tag: string, d: number): WorkloadView['containers'] => [
  { name: 'web', image: `${REPO}:${tag}@${dig(d)}` },
];

/** What the operator would do: units, one decision per unit from its first container, the input. */
function inputOf(p: ImagePolicy, workloads: readonly WorkloadView[]): PlanningInput {
  const { units } = selectUnits([p], workloads);
  const decisions = new Map<string, TargetDecision>();
  for (const u of units) {
    const image = u.workload.containers.find((c) => c.name === u.containers[0])?.image ?? '';
    decisions.set(u.id, resolveTarget(p, image, view, { platforms: [], now: T0 }));
  }
  return planningInput({ policy: p, units, decisions });
}

const canaryPolicy = policy({
  workloads: [{ namespaces: ['shop', 'canary'] }],
  canary: { namespaces: ['canary'], soakMs: 30 * MIN },
  policies: [
    { kind: 'canary', count: 3, soakMs: 0 },
    { kind: 'failure-budget', maxFailed: 1 },
  ],
});
const fleet = [
  workload('a'),
  workload('b', { labels: { tier: 'front' } }),
  workload('c', { available: false }),
  workload('z', { namespace: 'canary' }),
  workload('new', { containers: on('1.9.0-rev1', 3) }),
  workload('done', { containers: on('1.8.0-rev2', 2) }),
  workload('gm', { containers: on('1.8.0-rev2', 9) }),
];

describe('planningInput', () => {
  const p = { ...canaryPolicy, gm: [{ digest: dig(9), reason: 'SLE 16 GM' }] };
  const input = inputOf(p, fleet);
  const pool = 'web/1.8.0-rev2';

  it('makes one pool per target tag and digest, with the canary first', () => {
    assert.deepEqual(
      [...input.targets],
      [
        [pool, { tag: '1.8.0-rev2', digest: dig(2) }],
        ['web/1.9.0-rev1', { tag: '1.9.0-rev1', digest: dig(4) }],
      ],
    );
    assert.deepEqual(input.pools[0], {
      name: pool,
      policies: [
        { kind: 'zones', label: CANARY_LABEL, order: ['yes'] },
        { kind: 'canary', count: 1, soakMs: 30 * MIN },
        { kind: 'failure-budget', maxFailed: 1 },
      ],
    });
    assert.deepEqual(
      input.pools[1]?.policies,
      [{ kind: 'failure-budget', maxFailed: 1 }],
      'no canary unit in this pool: the canary policy replaced the count of 3',
    );
    validatePolicies(input.pools, [], input.machines);
  });

  it('makes each moving unit a machine, leaves current ones out, lists a GM unit pinned', () => {
    const byId = new Map(input.machines.map((m) => [m.id, m]));
    assert.deepEqual(byId.get('Deployment/shop/b'), {
      id: 'Deployment/shop/b',
      role: 'worker',
      pool,
      labels: { tier: 'front', [CANARY_LABEL]: 'no' },
      digest: dig(1),
      version: '1.8.0-rev2',
      available: true,
    });
    assert.equal(byId.get('Deployment/canary/z')?.labels[CANARY_LABEL], 'yes');
    assert.equal(byId.get('Deployment/shop/c')?.available, false);
    assert.equal(byId.get('Deployment/shop/new')?.pool, 'web/1.9.0-rev1');
    assert.equal(byId.has('Deployment/shop/done'), false);
    assert.deepEqual(byId.get('Deployment/shop/gm')?.pin, {
      version: dig(9),
      reason: 'GM image: SLE 16 GM',
    });
  });

  it('fits a canary count and zones of the policy to each pool, so the pools pass validation', () => {
    const noCanary: ImagePolicy = {
      name: p.name,
      repository: p.repository,
      follow: p.follow,
      workloads: p.workloads,
      policies: [],
      gm: p.gm,
    };
    const plain = inputOf(
      {
        ...noCanary,
        policies: [
          { kind: 'canary', count: 3, soakMs: 0 },
          { kind: 'zones', label: 'tier' },
        ],
      },
      fleet,
    );
    const [big, small] = plain.pools;
    assert.deepEqual(big?.policies, [
      { kind: 'canary', count: 3, soakMs: 0 },
      { kind: 'zones', label: 'tier' },
    ]);
    assert.deepEqual(small?.policies, [{ kind: 'canary', count: 1, soakMs: 0 }]);
    validatePolicies(plain.pools, [], plain.machines);
  });

  it('sets requireApproval from the policy', () => {
    const approved = inputOf({ ...p, requireApproval: true }, fleet);
    assert.ok(approved.pools.every((x) => x.requireApproval === true));
  });
});

describe('planningInput through the real planner', () => {
  const p = { ...canaryPolicy, gm: [{ digest: dig(9), reason: 'SLE 16 GM' }] };
  const input = inputOf(p, fleet);
  const pool = 'web/1.8.0-rev2';
  const target = input.targets.get(pool)!;
  const snapshot = (machines: Rollout['machines'], id = 'img1'): FleetSnapshot => ({
    machines: input.machines,
    pools: input.pools,
    fleetPolicies: [],
    rollouts: [
      {
        id,
        pool,
        target: { version: target.tag, digest: target.digest },
        state: 'Active',
        createdAt: T0 - HOUR,
        machines,
      },
    ],
    starts: [],
  });
  const action = (pl: Plan, id: string): string => {
    const d = pl.decisions.find((x) => x.machine === id);
    return `${d?.action} ${d?.reason?.code ?? ''}`.trim();
  };
  const done = (at: number): MachineProgress => ({
    phase: 'Succeeded',
    startedAt: at - MIN,
    finishedAt: at,
  });

  it('starts the canary unit first, the others wait for it and then for its soak', () => {
    const first = plan(snapshot({}), T0);
    assert.deepEqual(
      first.decisions.filter((d) => d.action === 'start').map((d) => [d.machine, d.batch]),
      [['Deployment/canary/z', 0]],
    );
    assert.equal(action(first, 'Deployment/shop/a'), 'wait CanaryPending');
    assert.equal(action(first, 'Deployment/shop/gm'), 'skipped Pinned');

    const soaking = plan(snapshot({ 'Deployment/canary/z': done(T0) }), T0 + 10 * MIN);
    assert.equal(action(soaking, 'Deployment/shop/a'), 'wait CanarySoaking');
    const a = soaking.decisions.find((d) => d.machine === 'Deployment/shop/a');
    assert.equal(a?.notBefore, T0 + 30 * MIN);

    const after = plan(snapshot({ 'Deployment/canary/z': done(T0) }), T0 + 30 * MIN);
    assert.deepEqual(
      after.decisions
        .filter((d) => d.action === 'start')
        .map((d) => d.machine)
        .sort(),
      ['Deployment/shop/a', 'Deployment/shop/b'],
    );
    assert.equal(action(after, 'Deployment/shop/c'), 'wait MachineUnavailable');
    assert.equal(action(after, 'Deployment/shop/gm'), 'skipped Pinned');
  });

  it('picks the canary unit whatever order the rollout hashes its units in', () => {
    for (let n = 0; n < 12; n++) {
      const p0 = plan(snapshot({}, `img-${n}`), T0);
      const started = p0.decisions.filter((d) => d.action === 'start').map((d) => d.machine);
      assert.deepEqual(started, ['Deployment/canary/z'], `rollout img-${n}`);
    }
  });

  it('passes over a GM unit even when it runs the target tag', () => {
    // Its version is the tag the rollout moves to; the pin's version (its digest) never is.
    const gm = input.machines.find((m) => m.id === 'Deployment/shop/gm');
    assert.equal(gm?.version, target.tag);
    assert.equal(action(plan(snapshot({}), T0), 'Deployment/shop/gm'), 'skipped Pinned');
  });
});
