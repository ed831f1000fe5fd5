// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planNeeded, settledBy, type DesiredKube } from './desired.ts';
import { target, three } from './fixtures.test.ts';
import type { KubeUpgrade } from './types.ts';

const want = (version: string, over: Partial<DesiredKube> = {}): DesiredKube => ({
  version,
  extraArgs: {},
  finalize: false,
  ...over,
});
const latest = (over: Partial<KubeUpgrade>): KubeUpgrade => ({
  id: 'p1',
  cluster: 'default',
  kind: 'upgrade',
  from: { version: 'v1.35.4' },
  target: target('v1.36.3', { emulatedVersion: '1.35' }),
  phase: 'Succeeded',
  createdAt: 1,
  by: 'declared',
  checks: [],
  steps: [],
  rollback: [],
  ...over,
});

describe('whether the desired Kubernetes needs a plan', () => {
  it('asks for an upgrade when the version differs from what runs', () => {
    assert.equal(planNeeded(want('v1.36.3'), three('v1.35.4'), undefined).kind, 'upgrade');
    assert.equal(planNeeded(want('v1.35.4'), three('v1.35.4'), undefined).kind, 'none');
  });

  it('waits for a plan that still moves', () => {
    assert.equal(
      planNeeded(want('v1.36.4'), three('v1.35.4'), latest({ phase: 'RollingBack' })).kind,
      'none',
    );
  });

  it('does not try again a target whose plan rolled back (no flapping)', () => {
    const n = planNeeded(want('v1.36.3'), three('v1.35.4'), latest({ phase: 'RolledBack' }));
    assert.deepEqual(n, { kind: 'none', why: 'up to date' });
    assert.equal(
      planNeeded(want('v1.36.4'), three('v1.35.4'), latest({ phase: 'RolledBack' })).kind,
      'upgrade',
    );
  });

  it('asks for a configure plan when only extraArgs change', () => {
    const n = planNeeded(
      want('v1.36.3', { extraArgs: { 'kube-apiserver': { v: '2' } } }),
      three('v1.36.3', { emulated: '1.35' }),
      latest({}),
    );
    assert.equal(n.kind, 'configure');
    assert.equal(
      planNeeded(
        want('v1.36.3', { extraArgs: { 'kube-apiserver': { v: '2' } } }),
        three('v1.36.3'),
        undefined,
      ).kind,
      'configure',
    );
  });

  it('finalizes after the upgrade succeeded, once', () => {
    const on = three('v1.36.3', { emulated: '1.35' });
    assert.equal(planNeeded(want('v1.36.3', { finalize: true }), on, latest({})).kind, 'finalize');
    assert.equal(
      planNeeded(want('v1.36.3', { finalize: true }), on, latest({ phase: 'RolledBack' })).kind,
      'none',
    );
    assert.equal(
      planNeeded(
        want('v1.36.3', { finalize: true }),
        on,
        latest({ kind: 'finalize', phase: 'RolledBack' }),
      ).kind,
      'none',
    );
    assert.equal(
      planNeeded(
        want('v1.36.3', { finalize: true }),
        three('v1.36.3'),
        latest({ kind: 'finalize' }),
      ).kind,
      'none',
    );
    assert.equal(planNeeded(want('v1.36.3', { finalize: true }), on, undefined).kind, 'finalize');
  });

  it('says when the latest plan settles the desired spec without asking the agents', () => {
    assert.ok(settledBy(want('v1.36.3'), latest({})));
    assert.ok(settledBy(want('v1.36.3'), latest({ phase: 'RolledBack' })));
    assert.ok(!settledBy(want('v1.36.3', { finalize: true }), latest({})));
    assert.ok(settledBy(want('v1.36.3', { finalize: true }), latest({ kind: 'finalize' })));
    assert.ok(!settledBy(want('v1.36.4'), latest({})));
    assert.ok(!settledBy(want('v1.36.3'), latest({ phase: 'Running' })));
    assert.ok(!settledBy(want('v1.36.3'), undefined));
  });
});
