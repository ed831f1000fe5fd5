// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { planSteps, type PlanInput } from './plan.ts';
import { bundle, machine, target, three } from './fixtures.test.ts';
import type { KubeStep } from './types.ts';

const input = (over: Partial<PlanInput> = {}): PlanInput => ({
  machines: three('v1.35.4'),
  etcdLeader: 'cp-1',
  target: target('v1.36.3', { emulatedVersion: '1.35' }),
  currentArgs: {},
  bundleOf: () => undefined,
  ...over,
});

const steps = (i: PlanInput): readonly KubeStep[] => {
  const r = planSteps(i);
  assert.ok(r.ok, JSON.stringify(r));
  return r.steps;
};
const line = (s: KubeStep): string =>
  `${s.machine} ${s.action}${s.component === undefined ? '' : ` ${s.component}`}`;

describe('the Kubernetes plan', () => {
  it('pre-pulls everywhere, then one machine at a time in component order, the etcd leader last after a forfeit', () => {
    assert.deepEqual(steps(input()).map(line), [
      'cp-2 prepull',
      'cp-3 prepull',
      'cp-1 prepull',
      'cp-2 apply kube-apiserver',
      'cp-2 apply kube-controller-manager',
      'cp-2 apply kube-scheduler',
      'cp-3 apply kube-apiserver',
      'cp-3 apply kube-controller-manager',
      'cp-3 apply kube-scheduler',
      'cp-1 forfeit-leadership',
      'cp-1 apply kube-apiserver',
      'cp-1 apply kube-controller-manager',
      'cp-1 apply kube-scheduler',
    ]);
  });

  it('hands no leadership over on a lone control plane: nobody could take it', () => {
    const lone = input({ machines: [machine('cp-1', 'v1.35.4')], etcdLeader: 'cp-1' });
    assert.deepEqual(steps(lone).map(line), [
      'cp-1 prepull',
      'cp-1 apply kube-apiserver',
      'cp-1 apply kube-controller-manager',
      'cp-1 apply kube-scheduler',
    ]);
  });

  it('records the spec each apply replaces, and the target spec with the emulation', () => {
    const s = steps(input()).find((x) => x.action === 'apply');
    assert.deepEqual(s?.spec, {
      version: 'v1.36.3',
      bundle: bundle('v1.36.3'),
      emulatedVersion: '1.35',
      extraArgs: {},
    });
    assert.deepEqual(s.previous, { version: 'v1.35.4', bundle: bundle('v1.35.4'), extraArgs: {} });
    assert.equal(s.state, 'pending');
    assert.equal(s.id, '04-cp-2-apply-kube-apiserver');
  });

  it('skips what already runs the target: a resumed plan made again does only the rest', () => {
    const half = [
      machine('cp-1', 'v1.35.4'),
      machine('cp-2', 'v1.36.3', { emulated: '1.35' }),
      machine('cp-3', 'v1.35.4'),
    ];
    assert.deepEqual(
      steps(input({ machines: half }))
        .map(line)
        .filter((l) => l.startsWith('cp-2')),
      [],
    );
  });

  it('plans a change of extraArgs alone, without a pre-pull, only for the component it changes', () => {
    const i = input({
      target: target('v1.35.4', { extraArgs: { 'kube-scheduler': { v: '4' } } }),
      etcdLeader: 'cp-3',
    });
    assert.deepEqual(steps(i).map(line), [
      'cp-1 apply kube-scheduler',
      'cp-2 apply kube-scheduler',
      'cp-3 forfeit-leadership',
      'cp-3 apply kube-scheduler',
    ]);
  });

  it('is empty when nothing changes', () => {
    assert.deepEqual(steps(input({ target: target('v1.35.4') })), []);
  });

  it('takes a bundle of the running version when a component reports none, and refuses when nobody knows it', () => {
    const bare = three('v1.35.4').map((m) => machine(m.id, 'v1.35.4', { bundle: null }));
    assert.equal(planSteps(input({ machines: bare })).ok, false);
    const r = planSteps(input({ machines: bare }));
    assert.equal(!r.ok && r.code, 'MOLT_KUBE_BUNDLE_NOT_FOUND');
    const known = steps(
      input({ machines: bare, bundleOf: (v) => (v === 'v1.35.4' ? 'r@sha256:old' : undefined) }),
    );
    assert.equal(known.find((s) => s.action === 'apply')?.previous?.bundle, 'r@sha256:old');
  });

  it('restarts at most one machine at a time and the leader last, whatever the fleet (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 7 }),
        fc.nat(),
        (ids, pick) => {
          const leader = ids[pick % ids.length] ?? '';
          const s = steps(
            input({ machines: ids.map((id) => machine(id, 'v1.35.4')), etcdLeader: leader }),
          );
          const applies = s.filter((x) => x.action !== 'prepull');
          // Each machine's steps are contiguous: never back to a machine once another started.
          const order = applies.map((x) => x.machine).filter((m, i, a) => a[i - 1] !== m);
          if (new Set(order).size !== order.length) return false;
          if (order.at(-1) !== leader) return false;
          const forfeit = applies.findIndex((x) => x.action === 'forfeit-leadership');
          if (ids.length === 1) return forfeit === -1;
          return (
            applies[forfeit]?.machine === leader &&
            applies[forfeit + 1]?.machine === leader &&
            s.slice(0, ids.length).every((x) => x.action === 'prepull')
          );
        },
      ),
    );
  });
});
