// SPDX-License-Identifier: Apache-2.0
// Issue 19 (docs/adr/0013 decision 9): image rollouts end to end on real components — a control
// plane with the scheduler and controller-manager, two lab kubelets that keep pods of an image
// labelled dev.molt.lab.ready=false Running but never Ready, the Debian registry, an etcd operator
// store, and `imagePass` in-process over the real adapters (the Workloads adapter as molt-operator
// under the shipped RBAC, `repositoryScanner`), driven every 500 ms until what users rely on holds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { ImagePolicy } from '../../../src/core/images/types.ts';
import type { Rollout } from '../../../src/core/rollout/types.ts';
import { buildImage, buildIndex } from '../../../src/oci/index.ts';
import { generateKeyPair } from '../../../src/releases/index.ts';
import { observeImages } from '../../../src/operator/images/observe.ts';
import type { WorkloadRef } from '../../../src/operator/ports/workloads.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { startRig, type Driver, type Rig } from './images-rollout-rig.ts';

const rebuild = (n: string) => ['1.8.0', '1.8.0-rev2', `1.8.0-rev2-${n}`];
const deploy = (namespace: string, name: string): WorkloadRef => ({
  kind: 'Deployment',
  namespace,
  name,
});
const id = (r: WorkloadRef) => `${r.kind}/${r.namespace}/${r.name}`;
/** Deployments fail fast: their own deadline says ProgressDeadlineExceeded after 10 s. */
const fast = { progressDeadlineSeconds: 10 };

function policy(name: string, repository: string, o: Partial<ImagePolicy> = {}): ImagePolicy {
  return {
    name,
    repository,
    follow: { kind: 'rebuilds' },
    workloads: [{ namespaces: [name] }],
    policies: [],
    gm: [],
    progressTimeoutMs: 30_000,
    ...o,
  };
}

const only = (rs: readonly Rollout[], f: (r: Rollout) => boolean): Rollout => {
  const found = rs.filter(f);
  assert.equal(found.length, 1, JSON.stringify(rs, null, 1));
  return found[0] as Rollout;
};

/** The one forward rollout of `d`, once it is `state`. */
const ended = (d: Driver, state: string) => async () => {
  const r = only(await d.rollouts(), (x) => x.rollbackOf === undefined);
  assert.equal(r.state, state, JSON.stringify(r));
  return r;
};

/** Every container of `ref` on `image`, in the template and in every running pod. */
async function runs(rig: Rig, ref: WorkloadRef, image: string): Promise<void> {
  assert.deepEqual(await rig.template(ref), { init: image, app: image, side: image }, id(ref));
  // Pods of the old template may still be going away (the lab kubelet confirms their deletion).
  await eventually(
    async () => {
      assert.deepEqual(await rig.podImages(ref), [image], id(ref));
    },
    { timeoutMs: 15_000, intervalMs: 250 },
  );
}

describe('image rollouts on a real control plane', { timeout: 300_000 }, () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig();
  });
  after(async () => {
    await rig.stop();
  });

  it('takes a rebuild to every following workload, the canary first, the rest after its soak', async () => {
    const repo = rig.repo('acme/web');
    const b1 = await rig.push('acme/web', rebuild('b1'), { build: '1' });
    const canary = deploy('web-canary', 'web');
    const rest: WorkloadRef[] = [
      deploy('web', 'front'),
      { kind: 'DaemonSet', namespace: 'web', name: 'agent' },
      { kind: 'StatefulSet', namespace: 'web', name: 'db' },
    ];
    const from = `${repo}:1.8.0-rev2@${b1}`;
    await Promise.all([canary, ...rest].map((r) => rig.create(r, from, fast)));
    const soakMs = 3_000;
    const d = rig.driver([
      policy('web', repo, {
        workloads: [{ namespaces: ['web', 'web-canary'] }],
        canary: { namespaces: ['web-canary'], soakMs },
      }),
    ]);
    await d.pass();
    assert.deepEqual(await d.rollouts(), [], 'nothing moves while every workload is current');

    const b2 = await rig.push('acme/web', rebuild('b2'), { build: '2' });
    const done = await d.until(ended(d, 'Completed'), 120_000);
    assert.equal(done.pool, 'web/1.8.0-rev2');
    assert.deepEqual(done.target, { version: '1.8.0-rev2', digest: b2 });
    const to = `${repo}:1.8.0-rev2@${b2}`;
    const c = done.machines[id(canary)];
    assert.equal(c?.phase, 'Succeeded');
    for (const r of rest) {
      const m = done.machines[id(r)];
      assert.equal(m?.phase, 'Succeeded', id(r));
      assert.ok(
        (m.startedAt ?? 0) >= (c.finishedAt ?? Infinity) + soakMs,
        `${id(r)} started after the canary was available and soaked`,
      );
      assert.deepEqual(done.images?.units[id(r)]?.changes, [
        { container: 'init', from, to },
        { container: 'app', from, to },
        { container: 'side', from, to },
      ]);
    }
    for (const r of [canary, ...rest]) await runs(rig, r, to);
  });

  it('halts a bad rebuild after the canary and puts the canary back; the rest never change', async () => {
    const repo = rig.repo('acme/api');
    const b1 = await rig.push('acme/api', rebuild('b1'), { build: '1' });
    const canary = deploy('api-canary', 'api');
    const rest = [deploy('api', 'front'), deploy('api', 'back')];
    const from = `${repo}:1.8.0-rev2@${b1}`;
    await Promise.all([canary, ...rest].map((r) => rig.create(r, from, fast)));
    const d = rig.driver([
      policy('api', repo, {
        workloads: [{ namespaces: ['api', 'api-canary'] }],
        canary: { namespaces: ['api-canary'], soakMs: 1_000 },
      }),
    ]);
    await d.pass();
    const bad = await rig.push('acme/api', rebuild('b2'), { build: '2', ready: 'false' });
    const back = await d.until(async () => {
      const r = only(await d.rollouts(), (x) => x.rollbackOf !== undefined);
      assert.equal(r.state, 'Completed', JSON.stringify(r));
      return r;
    }, 120_000);
    const halted = only(await d.rollouts(), (x) => x.rollbackOf === undefined);
    assert.equal(back.rollbackOf, halted.id);
    assert.equal(halted.target.digest, bad);
    assert.equal(halted.state, 'RolledBack');
    assert.deepEqual(Object.keys(halted.machines), [id(canary)], 'only the canary was started');
    assert.equal(halted.machines[id(canary)]?.phase, 'Failed');
    assert.match(halted.machines[id(canary)]?.reason ?? '', /ProgressDeadlineExceeded/);
    assert.deepEqual(Object.keys(back.images?.units ?? {}), [id(canary)]);
    assert.equal((await d.deps.workloads.progress(canary)).state, 'available');
    await runs(rig, canary, from);
    for (const r of rest) {
      assert.equal(await rig.generation(r), 1, `${id(r)} was never changed`);
      await runs(rig, r, from);
    }
    // The bad digest is not offered again: passes go on, nothing moves.
    for (let i = 0; i < 4; i++) await d.pass();
    assert.equal((await d.rollouts()).length, 2);
    await runs(rig, canary, from);
  });

  it('moves a new revision to short-tag followers only; intermediate-tag followers stay', async () => {
    const repo = rig.repo('acme/rev');
    const b1 = await rig.push('acme/rev', rebuild('b1'), { build: '1' });
    const rebuilds = deploy('rev-rebuilds', 'app');
    const revisions = deploy('rev-revisions', 'app');
    const from = `${repo}:1.8.0-rev2@${b1}`;
    await Promise.all([rebuilds, revisions].map((r) => rig.create(r, from, fast)));
    const d = rig.driver([
      policy('rev-rebuilds', repo),
      policy('rev-revisions', repo, { follow: { kind: 'revisions' } }),
    ]);
    await d.pass();
    const rev3 = await rig.push('acme/rev', ['1.8.0', '1.8.0-rev3', '1.8.0-rev3-b1'], {
      build: '3',
    });
    const done = await d.until(ended(d, 'Completed'));
    assert.equal(done.images?.policy, 'rev-revisions');
    await runs(rig, revisions, `${repo}:1.8.0-rev3@${rev3}`);
    assert.equal(await rig.generation(rebuilds), 1);
    await runs(rig, rebuilds, from);
  });

  it('waits on an index missing a platform the Nodes run, and takes it once complete', async () => {
    const repo = rig.repo('acme/multi');
    const b1 = await rig.push('acme/multi', rebuild('b1'), { build: '1' });
    const ref = deploy('multi', 'app');
    const from = `${repo}:1.8.0-rev2@${b1}`;
    await rig.create(ref, from, fast);
    const d = rig.driver([policy('multi', repo)]);
    await d.pass();
    const platform = (architecture: string, build: string) =>
      buildImage({ labels: { build }, platform: { os: 'linux', architecture } });
    await rig.push('acme/multi', rebuild('b2'), buildIndex([platform('arm64', '2')]));
    const decision = await d.until(async () => {
      const unit = (await observeImages(d.deps)).policies[0]?.units[0];
      assert.equal(unit?.decision.reason, 'PlatformsMissing', JSON.stringify(unit));
      return unit.decision;
    });
    assert.equal(decision.kind, 'wait');
    assert.match(decision.message ?? '', /linux\/amd64/);
    for (let i = 0; i < 3; i++) await d.pass();
    assert.deepEqual(await d.rollouts(), [], 'a half-published index is not taken');
    assert.equal(await rig.generation(ref), 1);

    const full = buildIndex([platform('amd64', '3'), platform('arm64', '3')]);
    const b3 = await rig.push('acme/multi', rebuild('b3'), full);
    await d.until(ended(d, 'Completed'));
    await runs(rig, ref, `${repo}:1.8.0-rev2@${b3}`);
  });

  it('never replaces a GM-pinned digest while the others move; moves it once a person drops the pin', async () => {
    const repo = rig.repo('acme/gm');
    const b0 = await rig.push('acme/gm', ['1.8.0-rev2-b0'], { build: '0' });
    const b1 = await rig.push('acme/gm', rebuild('b1'), { build: '1' });
    const pinned = deploy('gm', 'pinned');
    const mover = deploy('gm', 'mover');
    await rig.create(pinned, `${repo}:1.8.0-rev2@${b1}`, fast);
    await rig.create(mover, `${repo}:1.8.0-rev2@${b0}`, fast);
    let gm = [{ digest: b1, reason: 'GM of 1.8' }];
    const d = rig.driver(() => [policy('gm', repo, { gm })]);
    const b2 = await rig.push('acme/gm', rebuild('b2'), { build: '2' });
    const done = await d.until(ended(d, 'Completed'));
    assert.equal(done.target.digest, b2);
    assert.deepEqual(Object.keys(done.images?.units ?? {}), [id(mover)]);
    await runs(rig, mover, `${repo}:1.8.0-rev2@${b2}`);
    for (let i = 0; i < 3; i++) await d.pass();
    assert.equal(await rig.generation(pinned), 1, 'the pinned workload was never changed');
    await runs(rig, pinned, `${repo}:1.8.0-rev2@${b1}`);
    const seen = (await observeImages(d.deps)).policies[0]?.units.find((u) => u.id === id(pinned));
    assert.equal(seen?.decision.reason, 'GMPinned');

    gm = []; // a person says so: the digest is no longer pinned
    const repair = await d.until(async () => {
      const r = only(await d.rollouts(), (x) => x.repairOf === done.id);
      assert.equal(r.state, 'Completed', JSON.stringify(r));
      return r;
    });
    assert.deepEqual(repair.target, done.target);
    assert.deepEqual(Object.keys(repair.images?.units ?? {}), [id(pinned)]);
    await runs(rig, pinned, `${repo}:1.8.0-rev2@${b2}`);
  });

  it('follows an add-on in kube-system, taking a rebuild only once it is signed', async () => {
    const keys = generateKeyPair();
    const repo = rig.repo('acme/coredns');
    const b1 = await rig.push('acme/coredns', rebuild('b1'), { build: '1' });
    const dns = deploy('kube-system', 'coredns');
    await rig.create(dns, `${repo}:1.8.0-rev2@${b1}`, fast);
    const d = rig.driver(
      [
        policy('dns', repo, {
          workloads: [{ namespaces: ['kube-system'], names: ['coredns'] }],
          requireSignature: true,
        }),
      ],
      { publicKeyPem: keys.publicKeyPem },
    );
    const b2 = await rig.push('acme/coredns', rebuild('b2'), { build: '2' });
    const waiting = await d.until(async () => {
      const unit = (await observeImages(d.deps)).policies[0]?.units[0];
      assert.equal(unit?.decision.reason, 'Unsigned', JSON.stringify(unit));
      return unit.decision;
    });
    assert.equal(waiting.kind, 'wait');
    for (let i = 0; i < 3; i++) await d.pass();
    assert.deepEqual(await d.rollouts(), [], 'an unsigned rebuild is not taken');
    assert.equal(await rig.generation(dns), 1);

    await rig.sign('acme/coredns', b2, keys.privateKeyPem);
    const done = await d.until(ended(d, 'Completed'));
    assert.equal(done.target.digest, b2);
    await runs(rig, dns, `${repo}:1.8.0-rev2@${b2}`);
  });

  it('pauses with MOLT_IMAGE_MISSING when the tag is deleted mid-rollout; the rest never change', async () => {
    const repo = rig.repo('acme/gone');
    const b1 = await rig.push('acme/gone', rebuild('b1'), { build: '1' });
    const canary = deploy('gone-canary', 'web');
    const rest = deploy('gone', 'web');
    const from = `${repo}:1.8.0-rev2@${b1}`;
    await Promise.all([canary, rest].map((r) => rig.create(r, from, fast)));
    const d = rig.driver([
      policy('gone', repo, {
        workloads: [{ namespaces: ['gone', 'gone-canary'] }],
        // A soak long enough that the rest cannot start before the tag is deleted.
        canary: { namespaces: ['gone-canary'], soakMs: 600_000 },
      }),
    ]);
    await d.pass();
    const b2 = await rig.push('acme/gone', rebuild('b2'), { build: '2' });
    await d.until(async () => {
      const r = only(await d.rollouts(), () => true);
      assert.equal(r.machines[id(canary)]?.phase, 'Succeeded', JSON.stringify(r));
    });
    await rig.deleteManifest('acme/gone', b2);
    await d.until(ended(d, 'Paused'));
    const said = (await d.store.history()).filter((e) => e.kind === 'rollout-state');
    assert.ok(
      said.some((e) =>
        /MOLT_IMAGE_MISSING: .*acme\/gone:1\.8\.0-rev2 is no longer/.test(e.message),
      ),
      JSON.stringify(said),
    );
    for (let i = 0; i < 3; i++) await d.pass();
    assert.equal(await rig.generation(rest), 1, 'the rest never moved to a missing image');
    await runs(rig, rest, from);
  });

  it('pauses with MOLT_WORKLOAD_EDITED when someone else edits a workload in flight', async () => {
    const repo = rig.repo('acme/edit');
    const b1 = await rig.push('acme/edit', rebuild('b1'), { build: '1' });
    const ref = deploy('edit', 'web');
    await rig.create(ref, `${repo}:1.8.0-rev2@${b1}`, { progressDeadlineSeconds: 600 });
    const d = rig.driver([policy('edit', repo, { progressTimeoutMs: 120_000 })]);
    await d.pass();
    // Not ready: the unit stays in flight while the person edits.
    const b2 = await rig.push('acme/edit', rebuild('b2'), { build: '2', ready: 'false' });
    await d.until(async () => {
      const r = only(await d.rollouts(), () => true);
      assert.equal(r.machines[id(ref)]?.phase, 'InFlight');
    });
    assert.equal((await rig.template(ref))['app'], `${repo}:1.8.0-rev2@${b2}`);
    const hotfix = `${repo}:1.8.0-rev2-b1@${b1}`;
    await rig.c.admin.makeApiClient(AppsV1Api).patchNamespacedDeployment(
      {
        name: ref.name,
        namespace: ref.namespace,
        body: { spec: { template: { spec: { containers: [{ name: 'app', image: hotfix }] } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const paused = await d.until(ended(d, 'Paused'));
    assert.equal(paused.machines[id(ref)]?.phase, 'Skipped');
    assert.match(paused.machines[id(ref)]?.reason ?? '', /^MOLT_WORKLOAD_EDITED/);
    const events = await d.store.history();
    assert.ok(
      events.some((e) => e.kind === 'rollout-state' && /MOLT_WORKLOAD_EDITED/.test(e.message)),
    );
    for (let i = 0; i < 3; i++) await d.pass();
    assert.equal((await rig.template(ref))['app'], hotfix, "the person's edit is kept");
  });
});
