// SPDX-License-Identifier: Apache-2.0
// The Kubernetes plan's cluster-side health gates and removed-API check (docs/adr/0012 §4) against
// a real control plane: /readyz, the leader Leases renewing (the lab's controllers run without
// leader election, so the test writes the Lease itself), and the API server's own /metrics read by
// core's strict parser.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { parseDeprecatedApis } from '../../../src/core/kubernetes/deprecated-apis.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { createKubeHealth } from '../../../src/operator/adapters/kube-health/index.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';

let cp: KubeControlPlane;
before(async () => {
  cp = await startKubeControlPlane();
});
after(async () => {
  await cp.stop();
});

describe('control-plane health through a real cluster', () => {
  it('passes /readyz, and leaves the gate to the agent where leader election is off (no Lease)', async () => {
    const health = createKubeHealth({
      kc: await loadKubeConfig(cp.admin.kubeconfig),
      timeoutMs: 30_000,
    });
    const api = await health.afterApply({
      cluster: 'default',
      component: 'kube-apiserver',
      since: Date.now(),
    });
    assert.ok(api.ok, api.message);
    const sched = await health.afterApply({
      cluster: 'default',
      component: 'kube-scheduler',
      since: Date.now(),
    });
    assert.ok(sched.ok);
    assert.match(sched.message, /no kube-scheduler Lease \(leader election off\)/);
  });

  it('passes a leader Lease renewed after the step started, and fails one that is not, saying so', async () => {
    const kc = await loadKubeConfig(cp.admin.kubeconfig);
    const leases = kc.makeApiClient(CoordinationV1Api);
    const name = 'kube-controller-manager';
    const namespace = 'kube-system';
    const since = Date.now();
    const spec = (renewTime: V1MicroTime) => ({
      holderIdentity: 'cp-2_abc',
      leaseDurationSeconds: 15,
      renewTime,
    });
    await leases.createNamespacedLease({
      namespace,
      body: { metadata: { name, namespace }, spec: spec(new V1MicroTime(since - 60_000)) },
    });
    const health = createKubeHealth({ kc, timeoutMs: 1_500, intervalMs: 300 });
    const stale = await health.afterApply({ cluster: 'default', component: name, since });
    assert.equal(stale.ok, false);
    assert.match(
      stale.message,
      /the kube-controller-manager Lease was not renewed since the step started \(after 2 s\)/,
    );
    const current = await leases.readNamespacedLease({ name, namespace });
    await leases.replaceNamespacedLease({
      name,
      namespace,
      body: { ...current, spec: spec(new V1MicroTime(since + 1_000)) },
    });
    const renewed = await health.afterApply({ cluster: 'default', component: name, since });
    assert.ok(renewed.ok, renewed.message);
    assert.match(renewed.message, /renewed by cp-2_abc/);
  });

  it("reads the API server's /metrics, which the removed-API check parses", async () => {
    const health = createKubeHealth({ kc: await loadKubeConfig(cp.admin.kubeconfig) });
    const text = await health.metrics('default');
    assert.ok(text !== undefined && text.includes('apiserver_request_total'));
    assert.ok(Array.isArray(parseDeprecatedApis(text)));
  });
});
