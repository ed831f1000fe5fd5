// SPDX-License-Identifier: Apache-2.0
// ADR 0014 decision 5 against the real API server and CAPI v1.14.2's Machine CRD (no managers
// needed): molt's MoltInPlaceUpdate condition goes in by server-side apply on machines/status and
// leaves CAPI's conditions alone, both ways round; remediation annotates a control-plane Machine and
// deletes a worker, idempotently; `find` (decision 6) lists Machines across namespaces mapped to a
// molt machine by annotation or providerID, never by name; `get` reads the one Machine a hook
// names (its Cluster, version and mapping as the cluster has them), `ofMachineSet` a MachineSet's.
// `npm run test:capi test/capi/machines.test.ts`.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import { ErrorCode, isMoltError } from '../../src/core/errors.ts';
import {
  capiBinaries,
  installCapiCrds,
  waitServed,
} from '../../src/lab/services/capi-management.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../src/lab/services/kube-control-plane.ts';
import { createKubeCapiMachines } from '../../src/operator/adapters/capi-machines/index.ts';
import type { CapiMachines } from '../../src/operator/ports/capi-machines.ts';
import { loadKubeConfig } from '../../src/platform/kube/client.ts';

let kube: KubeControlPlane;
let dispatcher: Agent;
let machines: CapiMachines;

const base = '/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines';

before(async () => {
  kube = await startKubeControlPlane();
  const crds = join(await capiBinaries(), 'crds');
  const kubectl = join(kube.bins, 'kubectl');
  await installCapiCrds(kubectl, kube.admin.kubeconfig, crds);
  await waitServed(kubectl, kube.admin.kubeconfig, crds, 120_000);
  dispatcher = new Agent({ connect: { ca: kube.ca } });
  machines = createKubeCapiMachines({ kc: await loadKubeConfig(kube.admin.kubeconfig) });
});

after(async () => {
  await (dispatcher as Agent | undefined)?.close();
  await (kube as KubeControlPlane | undefined)?.stop();
});

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}
interface MachineJson {
  metadata: { annotations?: Record<string, string>; resourceVersion?: string };
  status?: { conditions?: Condition[] };
}

/** A request to the API as admin (CAPI's managers' identity here). */
async function api(
  path: string,
  init: { method?: string; body?: unknown; contentType?: string } = {},
): Promise<{ status: number; body: MachineJson & Record<string, unknown> }> {
  const res = await fetch(`${kube.server}${path}`, {
    dispatcher,
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${kube.admin.token}`,
      'content-type': init.contentType ?? 'application/json',
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as MachineJson & Record<string, unknown> };
}

interface MachineOptions {
  readonly namespace?: string;
  readonly annotations?: Record<string, string>;
  readonly providerID?: string;
  readonly nodeRef?: string;
  /** The MachineSet that owns it (label `cluster.x-k8s.io/set-name`). */
  readonly machineSet?: string;
}

/** A complete v1beta2 Machine (no webhooks default it), with CAPI's own conditions in status. */
async function createMachine(
  name: string,
  controlPlane: boolean,
  o: MachineOptions = {},
): Promise<void> {
  const at = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${o.namespace ?? 'default'}/machines`;
  const created = await api(at, {
    method: 'POST',
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name,
        ...(o.annotations !== undefined && { annotations: o.annotations }),
        labels: {
          'cluster.x-k8s.io/cluster-name': 'c1',
          ...(controlPlane && { 'cluster.x-k8s.io/control-plane': '' }),
          ...(o.machineSet !== undefined && { 'cluster.x-k8s.io/set-name': o.machineSet }),
        },
      },
      spec: {
        clusterName: 'c1',
        version: 'v1.34.0',
        bootstrap: { dataSecretName: `${name}-bootstrap` },
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'DevMachine',
          name,
        },
        ...(o.providerID !== undefined && { providerID: o.providerID }),
      },
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // As CAPI's Machine controller writes status: its own field manager, its own conditions.
  const status = await api(`${at}/${name}/status?fieldManager=manager`, {
    method: 'PATCH',
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        ...(o.nodeRef !== undefined && { nodeRef: { name: o.nodeRef } }),
        conditions: [
          capiCondition('Ready', 'True', 'Ready', ''),
          capiCondition('Updating', 'True', 'InPlaceUpdating', 'In-place update in progress'),
        ],
      },
    },
  });
  assert.equal(status.status, 200, JSON.stringify(status.body));
}

const capiCondition = (type: string, status: string, reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

const conditions = async (name: string): Promise<Condition[]> =>
  (await api(`${base}/${name}`)).body.status?.conditions ?? [];

describe('molt’s writes to Cluster API Machines (the real adapter)', () => {
  it('sets MoltInPlaceUpdate by server-side apply and keeps CAPI’s conditions, both ways round', async () => {
    await createMachine('md-0', false);
    const ref = { namespace: 'default', name: 'md-0', controlPlane: false };
    await machines.setCondition(ref, {
      status: 'Unknown',
      reason: 'InProgress',
      message: 'upgrading to molt-2.4.0 (rollout capi-md-0)',
      lastTransitionTime: '2026-01-02T00:00:00Z',
    });
    await machines.setCondition(ref, {
      status: 'False',
      reason: 'RolledBack',
      message: 'md-0 failed on molt-2.4.0 and rolled back by itself: kubelet not ready',
      lastTransitionTime: '2026-01-02T00:01:00Z',
    });
    let all = await conditions('md-0');
    assert.deepEqual(
      all.map((c) => c.type),
      ['Ready', 'Updating', 'MoltInPlaceUpdate'],
      JSON.stringify(all),
    );
    assert.deepEqual(all[0], capiCondition('Ready', 'True', 'Ready', ''));
    assert.deepEqual(
      all.find((c) => c.type === 'MoltInPlaceUpdate'),
      {
        type: 'MoltInPlaceUpdate',
        status: 'False',
        reason: 'RolledBack',
        message: 'md-0 failed on molt-2.4.0 and rolled back by itself: kubelet not ready',
        lastTransitionTime: '2026-01-02T00:01:00Z',
      },
    );

    // CAPI's patch helper then writes its conditions from a fresh read (an update of status):
    // molt's entry stays, and molt's next apply keeps CAPI's change.
    const m = (await api(`${base}/md-0`)).body;
    const changed = (m.status?.conditions ?? []).map((c) =>
      c.type === 'Updating'
        ? capiCondition('Updating', 'True', 'InPlaceUpdateFailed', 'failed')
        : c,
    );
    const put = await api(`${base}/md-0/status?fieldManager=manager`, {
      method: 'PUT',
      body: { ...m, status: { ...m.status, conditions: changed } },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    await machines.setCondition(ref, {
      status: 'False',
      reason: 'RolledBack',
      message: 'still rolled back',
      lastTransitionTime: '2026-01-02T00:01:00Z',
    });
    all = await conditions('md-0');
    assert.equal(all.find((c) => c.type === 'Updating')?.reason, 'InPlaceUpdateFailed');
    assert.equal(all.find((c) => c.type === 'MoltInPlaceUpdate')?.message, 'still rolled back');
    assert.equal(all.length, 3, JSON.stringify(all));
  });

  it('remediates a control-plane Machine by the annotation KCP reads, twice the same', async () => {
    await createMachine('cp-0', true);
    const ref = { namespace: 'default', name: 'cp-0', controlPlane: true };
    assert.equal(await machines.remediate(ref), 'annotated');
    assert.equal(await machines.remediate(ref), 'annotated');
    const m = (await api(`${base}/cp-0`)).body;
    assert.equal(m.metadata.annotations?.['cluster.x-k8s.io/remediate-machine'], '');
    assert.deepEqual(
      (m.status?.conditions ?? []).map((c) => c.type),
      ['Ready', 'Updating'],
    );
  });

  it('remediates a worker Machine by deleting it; a Machine already gone is success', async () => {
    await createMachine('md-1', false);
    const ref = { namespace: 'default', name: 'md-1', controlPlane: false };
    assert.equal(await machines.remediate(ref), 'deleted');
    assert.equal((await api(`${base}/md-1`)).status, 404);
    assert.equal(await machines.remediate(ref), 'gone');
  });

  it('remediates only the Machine molt read: one recreated under its name is neither deleted nor annotated', async () => {
    for (const [name, controlPlane] of [
      ['md-uid', false],
      ['cp-uid', true],
    ] as const) {
      await createMachine(name, controlPlane);
      const read = await machines.get('default', name);
      assert.ok(read !== undefined);
      assert.equal((await api(`${base}/${name}`, { method: 'DELETE' })).status, 200);
      await createMachine(name, controlPlane);
      const again = await machines.get('default', name);
      assert.ok(again !== undefined && again.uid !== read.uid, 'a new object under the name');
      const ref = { namespace: 'default', name, controlPlane, uid: read.uid };
      assert.equal(await machines.remediate(ref), 'gone');
      const m = (await api(`${base}/${name}`)).body;
      assert.equal(m.metadata.annotations?.['cluster.x-k8s.io/remediate-machine'], undefined);
      // The object molt reads now is remediated when asked by its own uid.
      const now = { ...ref, uid: again.uid };
      assert.equal(await machines.remediate(now), controlPlane ? 'annotated' : 'deleted');
    }
  });

  it('a write to a Machine that is not there is MOLT_CAPI_WRITE_FAILED', async () => {
    await assert.rejects(
      machines.setCondition(
        { namespace: 'default', name: 'nope', controlPlane: false },
        {
          status: 'True',
          reason: 'Updated',
          message: 'x',
          lastTransitionTime: '2026-01-02T00:00:00Z',
        },
      ),
      (e: unknown) => isMoltError(e, ErrorCode.CapiWriteFailed) && /nope/.test(e.message),
    );
  });

  it('finds the Machines mapped to a molt machine in every namespace, by annotation or providerID, not by name', async () => {
    const ns = await api('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'capi-a' } },
    });
    assert.equal(ns.status, 201, JSON.stringify(ns.body));
    await createMachine('cp-x', true, {
      namespace: 'capi-a',
      annotations: { 'molt.dev/machine': 'n-1' },
      nodeRef: 'node-1',
    });
    await createMachine('md-x', false, { providerID: 'molt://n-1' });
    await createMachine('n-1', false, { namespace: 'capi-a' }); // named like it: not mapped
    await createMachine('md-y', false, { providerID: 'molt://n-2' });
    const found = [...(await machines.find('n-1'))].sort((a, b) => a.name.localeCompare(b.name));
    assert.equal(found.length, 2, JSON.stringify(found));
    assert.match(found[0]?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      found.map((m) => ({ ...m, uid: m.uid.length })),
      [
        {
          namespace: 'capi-a',
          name: 'cp-x',
          clusterName: 'c1',
          moltMachine: 'n-1',
          version: 'v1.34.0',
          controlPlane: true,
          deleting: false,
          nodeRef: 'node-1',
          uid: 36,
        },
        {
          namespace: 'default',
          name: 'md-x',
          clusterName: 'c1',
          moltMachine: 'n-1',
          version: 'v1.34.0',
          controlPlane: false,
          deleting: false,
          uid: 36,
        },
      ],
    );
    assert.deepEqual(
      (await machines.find('n-2')).map((m) => m.name),
      ['md-y'],
    );
    assert.deepEqual(await machines.find('nope'), []);

    // Deleted but held by a finalizer (CAPI draining it): listed as deleting.
    const at = `${base}/md-y`;
    const held = await api(at, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers: ['test.molt.dev/hold'] } },
    });
    assert.equal(held.status, 200, JSON.stringify(held.body));
    assert.equal((await api(at, { method: 'DELETE' })).status, 200);
    assert.deepEqual(
      (await machines.find('n-2')).map((m) => [m.name, m.deleting]),
      [['md-y', true]],
    );
    await api(at, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers: null } },
    });
    assert.deepEqual(await machines.find('n-2'), []);
  });

  it('reads one Machine, or a MachineSet’s, as the cluster has them: Cluster, version, mapping; absent is undefined, unreadable MOLT_CAPI_READ_FAILED', async () => {
    const ns = await api('/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'capi-b' } },
    });
    assert.equal(ns.status, 201, JSON.stringify(ns.body));
    await createMachine('cp-g', true, {
      namespace: 'capi-b',
      annotations: { 'molt.dev/machine': 'n-3' },
      nodeRef: 'node-3',
    });
    // Named like a molt machine: not mapped.
    await createMachine('n-3', false, { namespace: 'capi-b', machineSet: 'md-b' });
    const read = await machines.get('capi-b', 'cp-g');
    assert.ok(read);
    assert.deepEqual(
      { ...read, uid: read.uid.length },
      {
        namespace: 'capi-b',
        name: 'cp-g',
        clusterName: 'c1',
        moltMachine: 'n-3',
        version: 'v1.34.0',
        controlPlane: true,
        deleting: false,
        nodeRef: 'node-3',
        uid: 36,
      },
    );
    assert.equal((await machines.get('capi-b', 'n-3'))?.moltMachine, undefined);
    assert.equal(await machines.get('capi-b', 'nope'), undefined);
    assert.equal(await machines.get('default', 'cp-g'), undefined);
    // A MachineSet's Machines: by its label, in its namespace only.
    await createMachine('md-b-1', false, {
      namespace: 'capi-b',
      annotations: { 'molt.dev/machine': 'n-4' },
      machineSet: 'md-b',
    });
    await createMachine('md-b-2', false, { machineSet: 'md-b' }); // namespace default
    assert.deepEqual(
      (await machines.ofMachineSet('capi-b', 'md-b')).map((m) => [m.name, m.moltMachine]).sort(),
      [
        ['md-b-1', 'n-4'],
        ['n-3', undefined],
      ],
    );
    assert.deepEqual(await machines.ofMachineSet('capi-b', 'md-none'), []);
    // molt-operator without the RBAC molt ships for it: a refused read is an error, not "absent".
    const unprivileged = createKubeCapiMachines({
      kc: await loadKubeConfig(kube.operator.kubeconfig),
    });
    await assert.rejects(unprivileged.get('capi-b', 'cp-g'), (e: unknown) =>
      isMoltError(e, ErrorCode.CapiReadFailed),
    );
    await assert.rejects(unprivileged.ofMachineSet('capi-b', 'md-b'), (e: unknown) =>
      isMoltError(e, ErrorCode.CapiReadFailed),
    );
  });
});
