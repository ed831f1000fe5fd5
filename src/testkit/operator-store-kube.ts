// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes plans and desired specs in the operator store conformance suite
 * (`operator-store-conformance.ts`; docs/adr/0012 §4): every field kept, one moving plan per
 * cluster even when creates race on several instances, compare-and-swap updates that lose no
 * write, the desired spec per cluster, and all of it seen by a new instance.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode } from '../core/errors.ts';
import type { KubeUpgrade } from '../core/kubernetes/types.ts';
import type { OperatorStore } from '../operator/ports/store.ts';
import { fresh, nth } from './operator-store-fixtures.ts';
import { rejectsWithCode } from './registry-conformance.ts';

const spec = (version: string, emulatedVersion?: string) => ({
  version,
  bundle: `reg/k@sha256:${'a'.repeat(64)}`,
  ...(emulatedVersion !== undefined && { emulatedVersion }),
  extraArgs: { v: '2' },
});

/** A plan with every optional field set. */
export function kubePlanFixture(
  cluster: string,
  id: string,
  over: Partial<KubeUpgrade> = {},
): KubeUpgrade {
  return {
    id,
    cluster,
    kind: 'upgrade',
    from: { version: 'v1.35.4', emulatedVersion: '1.34' },
    target: {
      version: 'v1.36.3',
      bundle: spec('v1.36.3').bundle,
      extraArgs: { 'kube-apiserver': { 'audit-log-maxage': '7' } },
      emulatedVersion: '1.35',
      finalize: false,
    },
    phase: 'Running',
    createdAt: 1_800_000_000_000,
    by: 'admin',
    checks: [{ name: 'path', ok: true, message: 'v1.35.4 → v1.36.3' }],
    steps: [
      {
        id: '01-cp-1-prepull',
        machine: 'cp-1',
        action: 'prepull',
        bundle: spec('v1.36.3').bundle,
        state: 'done',
        startedAt: 1,
        finishedAt: 2,
      },
      {
        id: '02-cp-1-forfeit-leadership',
        machine: 'cp-1',
        action: 'forfeit-leadership',
        state: 'failed',
        error: 'E: x',
        startedAt: 3,
        finishedAt: 4,
      },
      {
        id: '03-cp-1-apply-kube-apiserver',
        machine: 'cp-1',
        action: 'apply',
        component: 'kube-apiserver',
        spec: spec('v1.36.3', '1.35'),
        previous: spec('v1.35.4'),
        state: 'pending',
      },
    ],
    rollback: [
      {
        id: 'undo-01-cp-1-apply-kube-apiserver',
        machine: 'cp-1',
        action: 'apply',
        component: 'kube-apiserver',
        spec: spec('v1.35.4'),
        previous: spec('v1.36.3', '1.35'),
        state: 'started',
        startedAt: 5,
      },
    ],
    endedAt: 9,
    reason: 'a reason',
    ...over,
  };
}

export function kubeUpgradeConformance(
  storeOf: () => OperatorStore,
  open: () => OperatorStore,
): void {
  it('keeps every field of a Kubernetes plan, and lists a cluster’s plans by id', async () => {
    const store = storeOf();
    const cluster = fresh('k8s');
    const a = kubePlanFixture(cluster, '0001-v1.36.3', { phase: 'Succeeded' });
    const b = kubePlanFixture(cluster, '0002-finalize', { kind: 'finalize', phase: 'Failed' });
    await store.createKubeUpgrade(b);
    await store.createKubeUpgrade(a);
    assert.deepEqual(await open().kubeUpgrades(cluster), [a, b]);
    assert.ok((await store.kubeUpgrades()).some((p) => p.cluster === cluster && p.id === a.id));
    assert.deepEqual(await store.kubeUpgrades(fresh('none')), []);
  });

  it('refuses a second moving plan of a cluster, not one of another cluster or after the first ended', async () => {
    const store = storeOf();
    const [c1, c2] = [fresh('k8s'), fresh('k8s')];
    await store.createKubeUpgrade(kubePlanFixture(c1, '0001'));
    await rejectsWithCode(
      store.createKubeUpgrade(kubePlanFixture(c1, '0002')),
      ErrorCode.KubeUpgradeRunning,
      '0001',
    );
    await store.createKubeUpgrade(kubePlanFixture(c2, '0001', { phase: 'RollingBack' }));
    await store.updateKubeUpgrade(c1, '0001', (p) => ({ ...p, phase: 'RolledBack' }));
    await store.createKubeUpgrade(kubePlanFixture(c1, '0002'));
    await rejectsWithCode(
      store.createKubeUpgrade(kubePlanFixture(c1, '0002', { phase: 'Succeeded' })),
      ErrorCode.KubeUpgradeRunning,
    );
    assert.deepEqual(
      (await store.kubeUpgrades(c1)).map((p) => p.phase),
      ['RolledBack', 'Running'],
    );
  });

  it('creates exactly one moving plan when operators race', async () => {
    const cluster = fresh('k8s');
    const writers = [storeOf(), open(), open()];
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        nth(writers, i % writers.length).createKubeUpgrade(
          kubePlanFixture(cluster, `000${String(i)}`),
        ),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results)
      if (r.status === 'rejected')
        assert.equal((r.reason as { code?: string }).code, ErrorCode.KubeUpgradeRunning);
    assert.equal((await storeOf().kubeUpgrades(cluster)).length, 1);
  });

  it('updates a plan by compare-and-swap, losing no write, and refuses unknown plans and id changes', async () => {
    const cluster = fresh('k8s');
    const store = storeOf();
    await store.createKubeUpgrade(kubePlanFixture(cluster, 'p', { checks: [] }));
    const writers = [store, open(), open()];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        nth(writers, i % writers.length).updateKubeUpgrade(cluster, 'p', (p) => ({
          ...p,
          checks: [...p.checks, { name: `c${String(i)}`, ok: true, message: '' }],
        })),
      ),
    );
    assert.equal((await open().kubeUpgrades(cluster))[0]?.checks.length, 12);
    await rejectsWithCode(
      store.updateKubeUpgrade(cluster, 'nope', (p) => p),
      ErrorCode.KubeUpgradeNotFound,
      'nope',
    );
    await rejectsWithCode(
      store.updateKubeUpgrade(cluster, 'p', (p) => ({ ...p, id: 'q' })),
      ErrorCode.BadInput,
    );
  });

  it('keeps the desired Kubernetes per cluster, last writer wins', async () => {
    const store = storeOf();
    const cluster = fresh('k8s');
    assert.equal(await store.kubeDesired(cluster), undefined);
    const record = {
      cluster,
      spec: {
        version: 'v1.36.3',
        bundleRepository: 'acme/k',
        apiserver: { extraArgs: { v: '2' } },
        controllerManager: { extraArgs: {} },
        scheduler: { extraArgs: {} },
        finalize: true,
      },
      by: 'admin',
      at: 5,
      declared: '{"version":"v1.35.4"}',
    };
    await store.putKubeDesired(record);
    assert.deepEqual(await open().kubeDesired(cluster), record);
    await store.putKubeDesired({ ...record, by: 'declared', at: 6 });
    assert.equal((await open().kubeDesired(cluster))?.by, 'declared');
    const { cluster: c, spec, by, at } = record;
    const early = { cluster: c, spec, by, at, declaredUnread: true };
    await store.putKubeDesired(early);
    assert.deepEqual(await open().kubeDesired(cluster), early);
  });
}
