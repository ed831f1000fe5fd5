// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planSteps } from './plan.ts';
import { finished, nextStep, rollBackPlan, stepDone, stepFailed, stepStarted } from './progress.ts';
import { target, three } from './fixtures.test.ts';
import type { KubeUpgrade } from './types.ts';

function upgrade(): KubeUpgrade {
  const r = planSteps({
    machines: three('v1.35.4'),
    etcdLeader: 'cp-2',
    target: target('v1.36.3', { emulatedVersion: '1.35' }),
    currentArgs: {},
    bundleOf: () => undefined,
  });
  assert.ok(r.ok);
  return {
    id: '0001-v1.36.3',
    cluster: 'default',
    kind: 'upgrade',
    from: { version: 'v1.35.4' },
    target: target('v1.36.3', { emulatedVersion: '1.35' }),
    phase: 'Running',
    createdAt: 1,
    by: 'test',
    checks: [],
    steps: r.steps,
    rollback: [],
  };
}

/** Run steps until `fail` (a step id) fails or the plan ends; the ids run, in order. */
function run(u: KubeUpgrade, fail?: string): { u: KubeUpgrade; ran: string[] } {
  const ran: string[] = [];
  for (let t = 10; ; t++) {
    const next = nextStep(u);
    if (next.kind === 'none') return { u, ran };
    if (next.kind === 'finish') return { u: finished(u, t), ran };
    ran.push(next.step.id);
    u = stepStarted(u, next.list, next.step.id, t);
    u =
      next.step.id === fail
        ? stepFailed(u, {
            list: next.list,
            id: next.step.id,
            error: 'MOLT_KUBE_COMPONENT_UNHEALTHY: no',
            now: t,
          })
        : stepDone(u, next.list, next.step.id, t);
  }
}

describe('a recorded plan moving', () => {
  it('runs every step in order and succeeds', () => {
    const { u, ran } = run(upgrade());
    assert.equal(u.phase, 'Succeeded');
    assert.equal(ran.length, upgrade().steps.length);
    assert.ok(u.steps.every((s) => s.state === 'done' && s.finishedAt !== undefined));
  });

  it('rolls back a failure in the middle in reverse, back to from, forfeiting leadership again', () => {
    const plan = upgrade();
    assert.ok(plan.steps.some((s) => s.id === '10-cp-2-forfeit-leadership'));
    const at = '11-cp-2-apply-kube-apiserver';
    const { u, ran } = run(plan, at);
    assert.equal(u.phase, 'RolledBack');
    assert.match(
      u.reason ?? '',
      /11-cp-2-apply-kube-apiserver failed: MOLT_KUBE_COMPONENT_UNHEALTHY/,
    );
    const undo = u.rollback.map((s) => `${s.machine} ${s.action} ${s.component ?? ''}`.trim());
    assert.deepEqual(undo, [
      'cp-2 forfeit-leadership',
      'cp-2 apply kube-apiserver',
      'cp-3 apply kube-scheduler',
      'cp-3 apply kube-controller-manager',
      'cp-3 apply kube-apiserver',
      'cp-1 apply kube-scheduler',
      'cp-1 apply kube-controller-manager',
      'cp-1 apply kube-apiserver',
    ]);
    assert.ok(
      u.rollback.every(
        (s) =>
          s.action !== 'apply' ||
          (s.spec?.version === 'v1.35.4' && s.spec.emulatedVersion === undefined),
      ),
    );
    assert.equal(ran.at(-1), u.rollback.at(-1)?.id);
    assert.ok(
      u.steps.slice(11).every((s) => s.state === 'pending'),
      'nothing after the failure ran',
    );
  });

  it('fails the plan when an undo step fails too, saying where it stopped', () => {
    const plan = upgrade();
    assert.equal(run(plan, '05-cp-1-apply-kube-controller-manager').u.phase, 'RolledBack');
    // Fail the second undo step instead.
    let v = plan;
    for (;;) {
      const next = nextStep(v);
      if (next.kind !== 'run') break;
      v = stepStarted(v, next.list, next.step.id, 1);
      const fail =
        next.step.id === '05-cp-1-apply-kube-controller-manager' ||
        next.step.id === 'undo-02-cp-1-apply-kube-apiserver';
      v = fail
        ? stepFailed(v, { list: next.list, id: next.step.id, error: 'E: x', now: 2 })
        : stepDone(v, next.list, next.step.id, 2);
    }
    assert.equal(v.phase, 'Failed');
    assert.match(
      v.reason ?? '',
      /05-cp-1-apply-kube-controller-manager failed: E: x; then undo-02-cp-1-apply-kube-apiserver failed/,
    );
    assert.equal(nextStep(v).kind, 'none');
  });

  it('runs an interrupted step again (a new leader resumes from the record)', () => {
    let u = upgrade();
    const first = nextStep(u);
    assert.ok(first.kind === 'run');
    u = stepStarted(u, 'steps', first.step.id, 5);
    const again = nextStep(u);
    assert.ok(
      again.kind === 'run' && again.step.id === first.step.id && again.step.state === 'started',
    );
  });

  it('undoes an interrupted apply when a person rolls back, and pre-pulls never', () => {
    let u = upgrade();
    for (let i = 0; i < 4; i++) {
      const n = nextStep(u);
      assert.ok(n.kind === 'run');
      u = stepDone(stepStarted(u, 'steps', n.step.id, 1), 'steps', n.step.id, 2);
    }
    u = stepStarted(u, 'steps', '05-cp-1-apply-kube-controller-manager', 3);
    u = rollBackPlan(u, 'asked by admin');
    assert.equal(u.phase, 'RollingBack');
    assert.deepEqual(
      u.rollback.map((s) => s.component),
      ['kube-controller-manager', 'kube-apiserver'],
    );
    // The step in flight finishes while rolling back: recorded, the rollback list kept.
    const after = stepDone(u, 'steps', '05-cp-1-apply-kube-controller-manager', 4);
    assert.equal(after.phase, 'RollingBack');
    assert.equal(
      stepFailed(u, {
        list: 'steps',
        id: '05-cp-1-apply-kube-controller-manager',
        error: 'x',
        now: 4,
      }).rollback.length,
      2,
    );
    assert.equal(rollBackPlan(finished(upgrade(), 1), 'late').phase, 'Succeeded');
  });
});
