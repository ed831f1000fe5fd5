// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  KubernetesClusterSpec,
  type KubernetesClusterSpecInput,
} from '../../protocol/kube-cluster.ts';
import { currentDesired, effectiveDesired, requestDesired } from './desired.ts';
import { proposePlan } from './propose.ts';
import { actions, world, type World } from './fixtures.test.ts';

const propose = (w: World, spec: KubernetesClusterSpecInput) =>
  proposePlan(w.deps(), {
    cluster: 'default',
    kind: 'upgrade',
    spec: KubernetesClusterSpec.parse(spec),
    by: 'admin',
  });

/** Refused with `code`, before any agent was asked to change anything and with no plan recorded. */
async function refused(
  w: World,
  spec: KubernetesClusterSpecInput,
  code: string,
  text: RegExp,
): Promise<void> {
  await assert.rejects(propose(w, spec), (e: { code?: string; message?: string }) => {
    assert.equal(e.code, code);
    assert.match(e.message ?? '', text);
    return true;
  });
  assert.deepEqual(actions(w.agents.calls), []);
  assert.deepEqual(await w.store.kubeUpgrades(), []);
}

describe('bad input to a Kubernetes plan is refused before anything changes', () => {
  it('a version with no bundle in the registry', async () => {
    await refused(
      await world(),
      { version: 'v1.36.9' },
      'MOLT_KUBE_BUNDLE_NOT_FOUND',
      /installer-kubernetes:v1.36.9/,
    );
  });

  it('a skipped minor', async () => {
    await refused(await world(), { version: 'v1.37.0' }, 'MOLT_KUBE_VERSION_SKEW', /skips a minor/);
  });

  it('a node release that does not admit the target', async () => {
    const w = await world();
    w.range = '>=1.30.0 <1.36.0';
    await refused(
      w,
      { version: 'v1.36.3' },
      'MOLT_KUBE_RELEASE_INCOMPATIBLE',
      /supports Kubernetes >=1.30.0 <1.36.0/,
    );
  });

  it('a configuration with a flag the target removed', async () => {
    await refused(
      await world(),
      { version: 'v1.36.3', controllerManager: { extraArgs: { 'pod-eviction-timeout': '1m' } } },
      'MOLT_KUBE_FLAG_REMOVED',
      /pod-eviction-timeout/,
    );
  });

  it('a minor downgrade outside the window', async () => {
    await refused(
      await world({ version: 'v1.36.3' }),
      { version: 'v1.35.4' },
      'MOLT_KUBE_DOWNGRADE_WINDOW',
      /finalized/,
    );
  });

  it('an API the target removed, still in use', async () => {
    const w = await world();
    w.health.exposition =
      'apiserver_requested_deprecated_apis{group="x.k8s.io",removed_release="1.36",resource="things",subresource="",version="v1beta1"} 1\n';
    await refused(
      w,
      { version: 'v1.36.3' },
      'MOLT_KUBE_REMOVED_API_IN_USE',
      /x.k8s.io\/v1beta1 things/,
    );
  });

  it('a cluster whose running version has no bundle: the plan could not be undone', async () => {
    const w = await world();
    for (const r of w.agents.running.values())
      for (const [c, s] of r) r.set(c, { ...s, bundle: undefined as unknown as string });
    w.bundles.tags.delete('acme/installer-kubernetes:v1.35.4');
    await refused(
      w,
      { version: 'v1.36.3' },
      'MOLT_KUBE_BUNDLE_NOT_FOUND',
      /could not be rolled back: .*no bundle of v1\.35\.4, .*molt dev publish-kubernetes --version v1\.35\.4/,
    );
  });

  it('a bundle repository the operator config does not list', async () => {
    const w = await world();
    const theirs = `127.0.0.1:5000/tenant-a/kube@sha256:${'e'.repeat(64)}`;
    w.bundles.tags.set('tenant-a/kube:v1.36.3', theirs);
    const spec = { version: 'v1.36.3', bundleRepository: 'tenant-a/kube' };
    await refused(w, spec, 'MOLT_KUBE_BUNDLE_REPOSITORY_REFUSED', /tenant-a\/kube/);
    const listed = await proposePlan(w.deps({ bundleRepositories: ['tenant-a/kube'] }), {
      cluster: 'default',
      kind: 'upgrade',
      spec: KubernetesClusterSpec.parse(spec),
      by: 'admin',
    });
    assert.equal(listed.target.bundle, theirs, 'a repository the operator lists is taken');
  });

  it('allows a minor rollback inside the window and a patch downgrade', async () => {
    const inside = await propose(await world({ version: 'v1.36.3', emulated: '1.35' }), {
      version: 'v1.35.4',
    });
    assert.equal(inside.target.emulatedVersion, undefined);
    assert.equal(inside.steps.filter((s) => s.action === 'apply').length, 9);
    const patch = await propose(await world({ version: 'v1.35.5' }), { version: 'v1.35.4' });
    assert.match(patch.checks[0]?.message ?? '', /patch-downgrade/);
  });
});

describe('plan ids', () => {
  it('numbers a plan one past the highest id kept, not by count (a store may drop old plans)', async () => {
    const w = await world();
    const first = await propose(w, { version: 'v1.36.3' });
    assert.equal(first.id, '0001-upgrade-v1.36.3');
    // As the Kubernetes store leaves it once it dropped plans 2 to 6.
    await w.store.createKubeUpgrade({ ...first, phase: 'Failed' });
    await w.store.createKubeUpgrade({ ...first, id: '0007-upgrade-v1.36.3', phase: 'Failed' });
    const next = await propose(w, { version: 'v1.36.3' });
    assert.equal(next.id, '0008-upgrade-v1.36.3');
  });
});

describe('the desired Kubernetes of a cluster', () => {
  it('keeps a request made before the declared objects were first read: the read is its baseline, not a change', async () => {
    const w = await world();
    const d = w.deps();
    w.read = false;
    await requestDesired(d, {
      cluster: 'default',
      spec: KubernetesClusterSpec.parse({ version: 'v1.36.3' }),
      by: 'alice',
    });
    assert.equal((await effectiveDesired(d, 'default'))?.version, 'v1.36.3');
    // The first read finds the object at the version the request replaces.
    w.read = true;
    w.declare({ version: 'v1.35.4' });
    assert.equal((await currentDesired(d, 'default'))?.by, 'alice');
    assert.equal((await effectiveDesired(d, 'default'))?.version, 'v1.36.3');
    assert.equal((await effectiveDesired(d, 'default'))?.version, 'v1.36.3');
    assert.equal((await w.store.kubeDesired('default'))?.declaredUnread, undefined);
    // A later change of the object is the newer word.
    w.declare({ version: 'v1.35.5' });
    assert.equal((await effectiveDesired(d, 'default'))?.version, 'v1.35.5');
  });

  it('keeps a person’s request until the declared spec changes, then the declared one wins, in the history', async () => {
    const w = await world();
    const d = w.deps();
    w.declare({ version: 'v1.35.4' });
    assert.equal((await effectiveDesired(d, 'default'))?.version, 'v1.35.4');
    await requestDesired(d, {
      cluster: 'default',
      spec: KubernetesClusterSpec.parse({ version: 'v1.36.3' }),
      by: 'alice',
    });
    assert.equal((await effectiveDesired(d, 'default'))?.version, 'v1.36.3');
    w.declare({ version: 'v1.35.5' });
    assert.equal((await effectiveDesired(d, 'default'))?.version, 'v1.35.5');
    const said = (await w.store.history()).map((e) => e.message);
    assert.ok(said.includes('default: desired Kubernetes v1.36.3, asked by alice'));
    assert.ok(
      said.includes('default: desired Kubernetes v1.35.5 (declared; was v1.36.3 by alice)'),
    );
  });
});
