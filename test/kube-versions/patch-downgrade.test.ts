// SPDX-License-Identifier: Apache-2.0
// Issue 18: a patch downgrade by configuration, on real binaries — the hosted control plane on
// v1.36.3 is taken to v1.36.1 by editing its KubernetesCluster object, under continuous writes,
// and then back up to v1.36.3 by `molt cluster kubernetes upgrade`. A third Kubernetes build
// (about 5 min on 2 cores), so this is a slow suite of its own: `npm run test:kube-versions`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  applies,
  assertAllOn,
  ended,
  objectShows,
  planIds,
  servedVersion,
} from '../integration/kube/kube-upgrade-checks.ts';
import {
  applyCluster,
  current,
  earlierPatch,
  startUpgradeRig,
  underWrites,
  upgradeUnderWrites,
  type UpgradeRig,
} from '../integration/kube/kube-upgrade-rig.ts';

let rig: UpgradeRig;

before(async () => {
  rig = await startUpgradeRig({ from: current, bundles: [current, earlierPatch] });
});

after(async () => {
  await (rig as UpgradeRig | undefined)?.stop();
});

describe('a patch downgrade of the hosted control plane, by configuration', () => {
  it(`takes v1.36.3 to ${earlierPatch} when the KubernetesCluster says so: checked, one machine at a time, no failed write`, async (t) => {
    await assertAllOn(rig, current);
    const known = await planIds(rig);
    const r = await underWrites(rig, async () => {
      await applyCluster(rig.c, { version: earlierPatch });
      const plan = await ended(rig, earlierPatch, known);
      return { code: 0, stdout: plan.phase, stderr: '' };
    });
    t.diagnostic(
      `downgrade ${r.seconds.toFixed(1)} s, ${String(r.writes)} writes, ${String(r.failed)} failed, longest run without quorum ${String(r.longestBadRun)}`,
    );
    const plan = await ended(rig, earlierPatch, known);
    assert.equal(plan.phase, 'Succeeded', JSON.stringify(plan, null, 1));
    assert.equal(plan.by, 'declared');
    assert.ok(
      plan.checks.some((c) => c.ok && /patch-downgrade/.test(c.message)),
      JSON.stringify(plan.checks),
    );
    assert.equal(applies(plan.steps).length, 9);
    assert.equal(r.failed, 0, `failed writes; last error: ${r.lastError ?? '-'}`);
    assert.ok(r.writes > 50, `the client kept writing (${String(r.writes)})`);
    assert.ok(r.longestBadRun <= 1, `etcd kept quorum: ${r.worstPoll}`);
    await assertAllOn(rig, earlierPatch);
    assert.equal(await servedVersion(rig), earlierPatch);
    await objectShows(rig, 'Succeeded');
  });

  it('goes back up to v1.36.3 when asked, the request holding against the object', async () => {
    const known = await planIds(rig);
    const r = await upgradeUnderWrites(rig, current);
    assert.equal(r.run.code, 0, `${r.run.stdout}\n${r.run.stderr}`);
    const plan = await ended(rig, current, known);
    assert.equal(plan.phase, 'Succeeded', JSON.stringify(plan, null, 1));
    assert.equal(r.failed, 0, `failed writes; last error: ${r.lastError ?? '-'}`);
    await assertAllOn(rig, current);
    assert.equal((await rig.status()).desired?.version, current);
    // The object still says v1.36.1; its status says what is in force, and who asked for it.
    const table = await objectShows(rig, 'Succeeded');
    assert.match(table, /^default\s+v1\.36\.1\s+v1\.36\.3\s+Succeeded\s/m, table);
  });
});
