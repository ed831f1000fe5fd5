// SPDX-License-Identifier: Apache-2.0
// Issue 18: the Kubernetes version as configuration, end to end on the hosted cluster (three lab
// control-plane machines running etcd and the three components from their agents) with the real
// operator process (kube-upgrade-rig.ts). Bad input is refused before anything changes; `molt
// cluster kubernetes upgrade` moves v1.35 → v1.36 under continuous writes, one machine at a time,
// apiserver → controller-manager → scheduler, the etcd leader last; `molt cluster kubernetes
// rollback` takes the minor back inside the emulation window; and editing the KubernetesCluster
// object to v1.36 with a flag the new scheduler refuses fails on the first machine and is rolled
// back by itself, in reverse.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  applies,
  assertAllOn,
  ended,
  objectShows,
  planIds,
  servedVersion,
} from './kube-upgrade-checks.ts';
import {
  applyCluster,
  current,
  previous,
  startUpgradeRig,
  upgradeUnderWrites,
  type UpgradeRig,
} from './kube-upgrade-rig.ts';

let rig: UpgradeRig;

before(async () => {
  rig = await startUpgradeRig();
});

after(async () => {
  await (rig as UpgradeRig | undefined)?.stop();
});

describe('the Kubernetes version as configuration, on the hosted control plane', () => {
  it('refuses a version without a bundle, a skipped minor and a minor downgrade, changing nothing', async () => {
    const refused = async (to: string, code: RegExp) => {
      const r = await rig.cluster(['kubernetes', 'upgrade', '--to', to]);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, code);
    };
    await refused('v1.36.99', /MOLT_KUBE_BUNDLE_NOT_FOUND/);
    await refused('v1.37.2', /MOLT_KUBE_VERSION_SKEW/);
    await refused('v1.34.0', /MOLT_KUBE_DOWNGRADE_WINDOW|MOLT_KUBE_VERSION_SKEW/);
    assert.deepEqual((await rig.status()).plans, []);
    await assertAllOn(rig, previous);
  });

  it('upgrades v1.35 → v1.36 under continuous writes: one machine at a time, in component order, no failed write, quorum kept', async (t) => {
    const r = await upgradeUnderWrites(rig, current);
    t.diagnostic(
      `upgrade ${r.seconds.toFixed(1)} s, ${String(r.writes)} writes, ${String(r.failed)} failed, ${String(r.retries)} retried, longest run without quorum ${String(r.longestBadRun)}`,
    );
    assert.equal(r.run.code, 0, `${r.run.stdout}\n${r.run.stderr}`);
    const plan = await ended(rig, current);
    assert.equal(plan.phase, 'Succeeded', JSON.stringify(plan.steps, null, 1));
    // The recorded plan: pre-pulls first, then each machine's three components in order, one
    // machine after the other (each machine's steps end before the next machine's start).
    const steps = applies(plan.steps);
    assert.equal(steps.length, 9);
    const machines = [...new Set(steps.map((s) => s.machine))];
    assert.equal(machines.length, 3);
    for (const [i, m] of machines.entries()) {
      assert.deepEqual(
        steps.slice(i * 3, i * 3 + 3).map((s) => `${s.machine} ${s.component ?? ''}`),
        ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].map((c) => `${m} ${c}`),
      );
    }
    for (let i = 1; i < steps.length; i++)
      assert.ok(
        (steps[i]?.startedAt ?? '') >= (steps[i - 1]?.finishedAt ?? '~'),
        `step ${String(i)} started after the one before ended`,
      );
    const firstApply = plan.steps.findIndex((s) => s.action === 'apply');
    assert.ok(
      plan.steps.slice(0, firstApply).filter((s) => s.action === 'prepull').length === 3,
      'every machine pre-pulled before any component restarted',
    );
    for (const s of plan.steps) assert.equal(s.state, 'done', `${s.id}: ${s.error ?? ''}`);
    assert.equal(r.failed, 0, `failed writes; last error: ${r.lastError ?? '-'}`);
    assert.ok(r.writes > 50, `the client kept writing (${String(r.writes)})`);
    assert.ok(r.longestBadRun <= 1, `etcd kept quorum: ${r.worstPoll}`);
    await assertAllOn(rig, current, '1.35');
    assert.equal(await servedVersion(rig), current);
  });

  it('rolls the minor back to v1.35 with `molt cluster kubernetes rollback`, inside the emulation window', async () => {
    const known = await planIds(rig);
    const r = await rig.cluster(['kubernetes', 'rollback', '--reason', 'test', '--follow']);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const plan = await ended(rig, previous, known);
    assert.equal(plan.phase, 'Succeeded', JSON.stringify(plan.steps, null, 1));
    assert.equal(plan.kind, 'rollback');
    await assertAllOn(rig, previous);
    assert.equal(await servedVersion(rig), previous);
  });

  it('rolls back by itself when the edited KubernetesCluster gives the new scheduler a flag it refuses, ending on v1.35 everywhere', async () => {
    const known = await planIds(rig);
    await applyCluster(rig.c, {
      version: current,
      scheduler: { extraArgs: { 'no-such-flag': 'x' } },
    });
    const plan = await ended(rig, current, known);
    assert.equal(plan.phase, 'RolledBack', JSON.stringify(plan, null, 1));
    const failed = plan.steps.find((s) => s.state === 'failed');
    assert.ok(failed !== undefined, 'a failed step');
    assert.equal(failed.component, 'kube-scheduler');
    assert.match(failed.error ?? '', /MOLT_KUBE_COMPONENT_UNHEALTHY/);
    // The undo ran the first machine's controller-manager and then its API server back.
    const undone = applies(plan.rollback).map((s) => `${s.machine} ${s.component ?? ''}`);
    assert.deepEqual(
      undone.filter((u) => !u.endsWith('kube-scheduler')),
      [`${failed.machine} kube-controller-manager`, `${failed.machine} kube-apiserver`],
      undone.join(', '),
    );
    await assertAllOn(rig, previous);
    assert.equal(await servedVersion(rig), previous);
    // `kubectl get kubernetesclusters` says so too: the object's version, the plan's end.
    const table = await objectShows(rig, 'RolledBack');
    assert.match(table, /VERSION\s+DESIRED\s+PLAN\s+PROGRESS\s+ACCEPTED/);
    const v = current.replace(/\./g, '\\.');
    assert.match(table, new RegExp(`^default\\s+${v}\\s+${v}\\s+RolledBack\\s`, 'm'), table);
  });
});
