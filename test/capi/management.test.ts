// SPDX-License-Identifier: Apache-2.0
// Issue 20: a real Cluster API v1.14 management plane on the project's kube-apiserver — core, KCP,
// CABPK and CAPD (in-memory backend) managers, built once by scripts/ensure-capi-bins.sh (about
// 5 min on 2 cores), so a slow suite of its own: `npm run test:capi`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import {
  startCapiManagement,
  type CapiManagement,
} from '../../src/lab/services/capi-management.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../src/lab/services/kube-control-plane.ts';
import { freePort } from '../../src/platform/process/free-port.ts';
import { eventually } from '../../src/platform/process/managed-process.ts';

let kube: KubeControlPlane;
let capi: CapiManagement;
let dispatcher: Agent;

before(async () => {
  kube = await startKubeControlPlane();
  capi = await startCapiManagement(kube);
  dispatcher = new Agent({ connect: { ca: kube.ca } });
});

after(async () => {
  await (dispatcher as Agent | undefined)?.close();
  await (capi as CapiManagement | undefined)?.stop();
  await (kube as KubeControlPlane | undefined)?.stop();
});

/** A request to the API as admin; resolves with the status and the parsed body. */
async function api(path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${kube.server}${path}`, {
    dispatcher,
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${kube.admin.token}`, 'content-type': 'application/json' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly message?: string;
}

describe('a Cluster API management plane', () => {
  it('runs core, KCP, CABPK and CAPD, each answering /readyz (in-process: so still running)', async () => {
    assert.equal(capi.version, 'v1.14.2');
    assert.deepEqual(
      capi.managers.map((m) => m.name),
      [
        'cluster-api-manager',
        'kubeadm-control-plane-manager',
        'kubeadm-bootstrap-manager',
        'capd-manager',
      ],
    );
    for (const m of capi.managers) {
      const res = await fetch(m.readyz);
      assert.equal(res.status, 200, `${m.name}: ${await res.text()}`);
    }
  });

  it('serves the v1beta2 CRDs of every provider, the providers’ labelled with their contract', async () => {
    for (const path of [
      '/apis/cluster.x-k8s.io/v1beta2/clusters',
      '/apis/cluster.x-k8s.io/v1beta2/machinedeployments',
      '/apis/cluster.x-k8s.io/v1beta2/machines',
      '/apis/controlplane.cluster.x-k8s.io/v1beta2/kubeadmcontrolplanes',
      '/apis/bootstrap.cluster.x-k8s.io/v1beta2/kubeadmconfigs',
      '/apis/infrastructure.cluster.x-k8s.io/v1beta2/devmachines',
      '/apis/runtime.cluster.x-k8s.io/v1beta2/extensionconfigs',
    ]) {
      const r = await api(path);
      assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body['items'], [], path);
    }
    const crd = await api(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kubeadmcontrolplanes.controlplane.cluster.x-k8s.io',
    );
    const labels = (crd.body['metadata'] as { labels?: Record<string, string> }).labels ?? {};
    assert.equal(labels['cluster.x-k8s.io/v1beta2'], 'v1beta2', JSON.stringify(labels));
  });

  it('takes an ExtensionConfig, and core (Runtime SDK on) tries its discovery', async () => {
    // Nothing listens there: core must say Discovered=False, which it does only with RuntimeSDK on.
    const url = `https://127.0.0.1:${String(await freePort())}`;
    const created = await api('/apis/runtime.cluster.x-k8s.io/v1beta2/extensionconfigs', {
      method: 'POST',
      body: {
        apiVersion: 'runtime.cluster.x-k8s.io/v1beta2',
        kind: 'ExtensionConfig',
        metadata: { name: 'molt-test' },
        spec: {
          clientConfig: { url, caBundle: Buffer.from(capi.pki.ca.cert).toString('base64') },
          namespaceSelector: {},
        },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const discovered = await eventually(
      async () => {
        const r = await api('/apis/runtime.cluster.x-k8s.io/v1beta2/extensionconfigs/molt-test');
        const conditions = (r.body['status'] as { conditions?: Condition[] } | undefined)
          ?.conditions;
        const c = conditions?.find((x) => x.type === 'Discovered');
        if (c === undefined) throw new Error(`no Discovered condition: ${JSON.stringify(r.body)}`);
        return c;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    assert.equal(discovered.status, 'False', JSON.stringify(discovered));
  });
});
