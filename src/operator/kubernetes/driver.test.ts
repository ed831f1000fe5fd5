// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeUpgrade } from '../../core/kubernetes/types.ts';
import { createKubePlanDriver } from './driver.ts';
import { actions, specAt, world, type World } from './fixtures.test.ts';

const forward = [
  'cp-1 prepull',
  'cp-3 prepull',
  'cp-2 prepull',
  'cp-1 apply kube-apiserver v1.36.3~1.35',
  'cp-1 apply kube-controller-manager v1.36.3~1.35',
  'cp-1 apply kube-scheduler v1.36.3~1.35',
  'cp-3 apply kube-apiserver v1.36.3~1.35',
  'cp-3 apply kube-controller-manager v1.36.3~1.35',
  'cp-3 apply kube-scheduler v1.36.3~1.35',
  'cp-2 forfeit',
  'cp-2 apply kube-apiserver v1.36.3~1.35',
  'cp-2 apply kube-controller-manager v1.36.3~1.35',
  'cp-2 apply kube-scheduler v1.36.3~1.35',
];

async function runPass(w: World): Promise<KubeUpgrade[]> {
  const driver = createKubePlanDriver(w.deps());
  await driver.pass();
  await driver.idle();
  return w.store.kubeUpgrades('default');
}

const everywhere = (w: World): string[] =>
  [...w.agents.running].flatMap(([m, r]) =>
    [...r].map(
      ([c, s]) =>
        `${m} ${c} ${s.version}${s.emulatedVersion === undefined ? '' : `~${s.emulatedVersion}`}`,
    ),
  );

describe('the operator runs a Kubernetes plan', () => {
  it('upgrades one machine at a time in component order, the etcd leader last after a forfeit, recording every step', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    const [plan] = await runPass(w);
    assert.deepEqual(actions(w.agents.calls), forward);
    assert.equal(plan?.phase, 'Succeeded');
    assert.equal(plan.kind, 'upgrade');
    assert.deepEqual(plan.from, { version: 'v1.35.4' });
    assert.ok(
      plan.steps.every(
        (s) => s.state === 'done' && s.startedAt !== undefined && s.finishedAt !== undefined,
      ),
    );
    assert.ok(everywhere(w).every((l) => l.endsWith('v1.36.3~1.35')));
    assert.deepEqual(w.health.asked.slice(0, 3), [
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    const history = await w.store.history();
    assert.equal(history.filter((e) => e.kind === 'kube-step').length, 2 * plan.steps.length);
    assert.match(history.at(-1)?.message ?? '', /Succeeded/);
    // Level-based: the next pass finds nothing to do.
    await runPass(w);
    assert.equal((await w.store.kubeUpgrades('default')).length, 1);
  });

  it('waits out an agent that does not answer for a while (a busy machine), then goes on', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    // Planned and under way when cp-3's agent stops answering.
    w.agents.onApply = (machine, component) => {
      if (machine === 'cp-1' && component === 'kube-scheduler') w.agents.unreachable.add('cp-3');
    };
    const waits: number[] = [];
    const driver = createKubePlanDriver({
      ...w.deps(),
      sleep: (ms) => {
        waits.push(ms);
        if (waits.length === 6) w.agents.unreachable.delete('cp-3');
        return Promise.resolve();
      },
    });
    await driver.pass();
    await driver.idle();
    const [plan] = await w.store.kubeUpgrades('default');
    assert.equal(plan?.phase, 'Succeeded', plan?.reason);
    assert.deepEqual(waits.slice(0, 6), [2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    assert.ok(everywhere(w).every((l) => l.endsWith('v1.36.3~1.35')));
  });

  it('checks a recorded plan’s bundle again before any pre-pull: an unsigned one reaches no agent', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    const target = w.bundles.tags.get('acme/installer-kubernetes:v1.36.3') ?? '';
    // As a plan made before the operator had its release key: verified only now.
    w.bundles.unsigned.add(target);
    const [plan] = await runPass(w);
    assert.deepEqual(actions(w.agents.calls), [], 'no agent was asked to pull or apply anything');
    assert.ok(w.bundles.verified.includes(target));
    assert.notEqual(plan?.phase, 'Succeeded');
    assert.match(plan?.reason ?? '', /MOLT_SIGNATURE_MISSING/);
  });

  it('rolls a failure in the middle back by itself, in reverse, to the recorded from everywhere', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    w.agents.failing.add('cp-3 kube-controller-manager v1.36.3');
    const [plan] = await runPass(w);
    assert.equal(plan?.phase, 'RolledBack');
    assert.match(
      plan.reason ?? '',
      /cp-3-apply-kube-controller-manager failed: MOLT_KUBE_COMPONENT_UNHEALTHY/,
    );
    assert.deepEqual(
      actions(w.agents.calls).slice(
        forward.indexOf('cp-3 apply kube-controller-manager v1.36.3~1.35'),
      ),
      [
        'cp-3 apply kube-controller-manager v1.36.3~1.35',
        'cp-3 apply kube-controller-manager v1.35.4',
        'cp-3 apply kube-apiserver v1.35.4',
        'cp-1 apply kube-scheduler v1.35.4',
        'cp-1 apply kube-controller-manager v1.35.4',
        'cp-1 apply kube-apiserver v1.35.4',
      ],
    );
    assert.ok(
      everywhere(w).every((l) => l.endsWith('v1.35.4')),
      everywhere(w).join('\n'),
    );
    assert.ok(!w.agents.calls.includes('cp-2 forfeit'), 'the leader was never touched');
    // The rolled-back target is not tried again until the desired spec changes.
    await runPass(w);
    assert.equal((await w.store.kubeUpgrades('default')).length, 1);
  });

  it('rolls back when a health gate fails after the agent said healthy', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    w.health.failNext.push('kube-scheduler');
    const [plan] = await runPass(w);
    assert.equal(plan?.phase, 'RolledBack');
    assert.match(plan.reason ?? '', /the kube-scheduler Lease was not renewed/);
    assert.ok(everywhere(w).every((l) => l.endsWith('v1.35.4')));
  });

  it('fails the plan for a person when an undo step fails too', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    w.agents.failing.add('cp-3 kube-apiserver v1.36.3');
    w.agents.failing.add('cp-1 kube-scheduler v1.35.4');
    const [plan] = await runPass(w);
    assert.equal(plan?.phase, 'Failed');
    assert.match(plan.reason ?? '', /then undo-\d+-cp-1-apply-kube-scheduler failed/);
  });

  it('continues from the last recorded step after a new leader takes over between steps', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    let applies = 0;
    w.agents.onApply = () => {
      if (++applies === 4) w.leader = false; // deposed while cp-3's kube-apiserver applies
    };
    const [first] = await runPass(w);
    assert.equal(first?.phase, 'Running');
    assert.equal(first.steps.filter((s) => s.state === 'done').length, 7);
    w.leader = true;
    w.agents.onApply = undefined;
    const before = actions(w.agents.calls).length;
    const [plan] = await runPass(w);
    assert.equal(plan?.phase, 'Succeeded');
    assert.deepEqual(actions(w.agents.calls).slice(before), forward.slice(7));
  });

  it('runs an interrupted step again when the old leader died in the middle of it', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    w.leader = false;
    const driver = createKubePlanDriver(w.deps({ isLeader: () => true }));
    w.agents.onApply = () => Promise.reject(new Error('never answered'));
    await driver.pass();
    await driver.idle();
    // Make the record look like the leader died after recording `started`: the step was not failed.
    const [p] = await w.store.kubeUpgrades('default');
    assert.ok(p !== undefined);
    await w.store.updateKubeUpgrade('default', p.id, (u) => ({
      ...u,
      phase: 'Running',
      rollback: [],
      reason: undefined as unknown as string,
      steps: u.steps.map((s) =>
        s.state === 'failed'
          ? { ...s, state: 'started', error: undefined as unknown as string }
          : s,
      ),
    }));
    w.agents.onApply = undefined;
    w.leader = true;
    const [plan] = await runPass(w);
    assert.equal(plan?.phase, 'Succeeded');
    const history = await w.store.history();
    assert.ok(
      history.some((e) => e.kind === 'kube-step' && /started again \(resumed\)/.test(e.message)),
    );
  });

  it('finalizes as its own recorded plan after the upgrade succeeded: the emulation dropped everywhere, the leader last', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    await runPass(w);
    w.declare({ version: 'v1.36.3', finalize: true });
    const before = actions(w.agents.calls).length;
    const [, fin] = await runPass(w);
    assert.equal(fin?.kind, 'finalize');
    assert.equal(fin.phase, 'Succeeded');
    assert.equal(fin.target.emulatedVersion, undefined);
    const calls = actions(w.agents.calls).slice(before);
    assert.equal(calls.filter((c) => c.includes('prepull')).length, 0);
    assert.deepEqual(calls.slice(-4), [
      'cp-1 forfeit',
      'cp-1 apply kube-apiserver v1.36.3',
      'cp-1 apply kube-controller-manager v1.36.3',
      'cp-1 apply kube-scheduler v1.36.3',
    ]);
    assert.equal(w.agents.leader, 'cp-2', 'the finalize handed it on again');
    assert.ok(everywhere(w).every((l) => l.endsWith('v1.36.3')));
  });

  it('applies a change of extraArgs alone as a plan', async () => {
    const w = await world();
    w.declare({ version: 'v1.35.4', scheduler: { extraArgs: { v: '4' } } });
    const [plan] = await runPass(w);
    assert.equal(plan?.kind, 'configure');
    assert.deepEqual(actions(w.agents.calls), [
      'cp-1 apply kube-scheduler v1.35.4',
      'cp-3 apply kube-scheduler v1.35.4',
      'cp-2 forfeit',
      'cp-2 apply kube-scheduler v1.35.4',
    ]);
    assert.deepEqual(w.agents.running.get('cp-2')?.get('kube-scheduler'), {
      ...specAt('v1.35.4'),
      extraArgs: { v: '4' },
    });
  });

  it('says a refused plan once, moves nothing, and plans when the reason is gone', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    w.range = '<1.36.0';
    const driver = createKubePlanDriver(w.deps());
    await driver.pass();
    await driver.pass();
    assert.deepEqual(await w.store.kubeUpgrades('default'), []);
    assert.deepEqual(actions(w.agents.calls), []);
    const warnings = (await w.store.history()).filter((e) => e.kind === 'warning');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]?.message ?? '', /MOLT_KUBE_RELEASE_INCOMPATIBLE/);
    w.range = '>=1.35.0';
    assert.equal((await runPass(w))[0]?.phase, 'Succeeded');
  });

  it('does nothing while not leading', async () => {
    const w = await world();
    w.declare({ version: 'v1.36.3' });
    w.leader = false;
    assert.deepEqual(await runPass(w), []);
  });
});
