// SPDX-License-Identifier: Apache-2.0
// The Cluster API extension end to end (docs/adr/0014): a real Cluster API v1.14 management plane (core, KCP, CABPK,
// CAPD's in-memory backend, feature gates RuntimeSDK and InPlaceUpdates on) on the project's
// kube-apiserver drives the real `molt operator` process, registered by the ExtensionConfig that
// `molt capi extension-config` prints, and a molt lab machine (`w-1`, real A/B slots and boot-once
// reboots under the lab firmware) mapped to the MachineDeployment's in-memory Machine by the
// annotation `molt.dev/machine`. The test plays only the kubelet of the in-memory Node (CAPD's
// Nodes never change by themselves): once molt has rebooted w-1 into the release, it reports that
// release's Kubernetes version, as the kubelet on the machine would.
//
// 0. A version bump of the KubeadmControlPlane (one replica, maxSurge 0), its Machine mapped to the
//    lab control-plane machine cp-1 (an etcd member): CAPI asks CanUpdateMachine, molt patches the
//    version, UpdateMachine runs cp-1's upgrade under molt's control-plane rules (etcd lease and
//    quorum, health) — a real reboot into slot B — and the Machine ends UpToDate.
// 1. A version bump of the MachineDeployment: CAPI asks molt (CanUpdateMachineSet), molt patches
//    the version, CAPI keeps the Machine and calls UpdateMachine; molt's targeted rollout waits
//    while w-1 is held (molt's policies hold while CAPI drives), then reboots w-1 into slot B and
//    answers done; the Machine ends UpToDate, same name.
// 2. Two Machines of another MachineDeployment (maxUnavailable 2) asked for at once, mapped to w-2
//    and w-3: molt runs them one after the other (the pool's concurrency 1), both end UpToDate.
// 3. A change molt cannot apply in place (another infrastructure template): molt answers with no
//    patch, CAPI replaces the Machine; w-1 is not touched.
// 5. A pool with `strategy: replace` and `provider: {capi: {}}` (w-4, c1-md3's Machine): a new
//    release makes molt delete the Machine; the test plays the infrastructure provider (re-images
//    w-4 onto the release and maps the new Machine to it); the rollout completes.
// 4. A release that never becomes healthy: w-1 rolls back by itself, molt answers Failure, the
//    Machine says InPlaceUpdateFailed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { parse } from 'yaml';
import { official, startLabFleet, type LabFleet } from '../../src/lab/fleet/fleet.ts';
import { waitClusterHealthy } from '../../src/lab/fleet/control-plane.ts';
import { agentStatus } from '../../src/lab/fleet/machine.ts';
import { writeOperatorFiles } from '../../src/lab/fleet/operator-files.ts';
import { issueOperatorApiCert } from '../../src/lab/fleet/operator-pki.ts';
import {
  startCapiManagement,
  type CapiManagement,
} from '../../src/lab/services/capi-management.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../src/lab/services/kube-control-plane.ts';
import { eventually, type ManagedProcess } from '../../src/platform/process/managed-process.ts';
import { RolloutSummaryView, RolloutView } from '../../src/protocol/operator.ts';
import { afterPasses } from '../../src/testkit/reconcile-passes.ts';
import { maxOverlap } from '../../src/testkit/rollout-timing.ts';
import { startCapiOperator } from '../../src/testkit/capi-operator.ts';
import { moltArgv } from '../../src/testkit/molt-entry.ts';
import {
  conditionOf,
  management,
  ns,
  reportKubelet,
  workloadCluster,
  type CapiMachine,
  type Obj,
} from './workload-cluster.ts';

const run = promisify(execFile);
const kubeVersion = { '1.0.0': 'v1.34.2', '1.1.0': 'v1.35.0', '1.2.0': 'v1.36.0' } as const;

let kube: KubeControlPlane;
let capi: CapiManagement;
let fleet: LabFleet;
let operator: ManagedProcess;
let api: string;
let tls: Agent;
let mgmt: ReturnType<typeof management>;
let worker: CapiMachine;
/** The KubeadmControlPlane's Machine: cp-1, an etcd member. */
let controlPlane: CapiMachine;
/** c1-md2's two Machines: w-2 and w-3. */
let pair: CapiMachine[];

const agent = async (id: string) => {
  const w = fleet.machines.find((x) => x.id === id);
  assert.ok(w, id);
  return agentStatus(fleet.pki, w.endpoint);
};
const w1 = () => agent('w-1');

/** `molt <args>` of this checkout; its stdout. */
async function molt(...args: string[]): Promise<string> {
  const [node = process.execPath, ...entry] = moltArgv;
  return (await run(node, [...entry, ...args], { maxBuffer: 1024 * 1024 })).stdout;
}

/** A call to the operator's API as the operator's own identity. */
async function operatorApi(method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await request(`${api}${path}`, {
    method,
    dispatcher: tls,
    ...(body !== undefined && {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    }),
  });
  const text = await res.body.text();
  assert.ok(res.statusCode < 300, `${method} ${path}: ${String(res.statusCode)} ${text}`);
  return JSON.parse(text) as unknown;
}

/** The rollout `id` as the operator's API shows it (undefined: none). */
async function rollout(id: string): Promise<{ state: string } | undefined> {
  const all = (await operatorApi('GET', '/v1/rollouts')) as { id: string; state: string }[];
  return all.find((r) => r.id === id);
}

/** The operator's `GET /metrics` text. */
async function metrics(): Promise<string> {
  const res = await request(`${api}/metrics`, { dispatcher: tls });
  const text = await res.body.text();
  assert.equal(res.statusCode, 200, `GET /metrics: ${text}`);
  return text;
}

/** The Machine `name` once `ok` holds for it (the last one seen in the error otherwise). */
async function machineWhen(
  name: string,
  ok: (m: CapiMachine) => boolean,
  timeoutMs: number,
): Promise<CapiMachine> {
  let last: CapiMachine | undefined;
  return eventually(
    async () => {
      last = (await mgmt.machines()).find((m) => m.metadata.name === name);
      if (last === undefined || !ok(last))
        throw new Error(`Machine ${name}: ${JSON.stringify(last?.status?.conditions)}`);
      return last;
    },
    { timeoutMs, intervalMs: 1_000 },
  );
}

before(async () => {
  kube = await startKubeControlPlane();
  capi = await startCapiManagement(kube);
  mgmt = management(capi.kubeconfig);
  await run(join(kube.bins, 'kubectl'), [
    ...['--kubeconfig', kube.admin.kubeconfig, 'apply', '-f'],
    join(import.meta.dirname, '../../deploy/kubernetes/capi-rbac.yaml'),
  ]);
  fleet = await startLabFleet({ molt: moltArgv, workers: 4 });
  await fleet.publish('1.1.0', {
    ...official,
    // In a channel: a release in none is offered to no pool, Cluster API's included.
    'dev.molt.channels': 'stable',
    'dev.molt.kubernetes.version': kubeVersion['1.1.0'],
  });
  // w-4 is in a pool that Cluster API replaces machines of (decision 6).
  const machines = fleet.machines.map((m) => (m.id === 'w-4' ? { ...m, pool: 'replaced' } : m));
  const config = await writeOperatorFiles(
    { ...fleet, machines },
    {
      // No channel: the pool moves only when Cluster API asks.
      pools: [
        { name: 'control-plane', policies: [{ concurrency: 1 }] },
        { name: 'workers', policies: [{ concurrency: 1 }] },
        { name: 'replaced', channel: 'edge', strategy: 'replace', provider: { capi: {} } },
      ],
      config: {
        pki: await issueOperatorApiCert(fleet.pki.dir),
        listen: { host: '127.0.0.1', port: 0 },
        capi: {
          listen: { host: '127.0.0.1', port: 0 },
          clientCa: capi.pki.caFile,
          // Each Machine is molt's only in a Cluster mapped to its machine's pool.
          clusters: { [`${ns}/c1`]: ['control-plane', 'workers', 'replaced'] },
          // molt writes back to the management cluster (its condition, remediation, replace)
          // as molt-operator, under the RBAC molt ships for it.
          kubeconfig: kube.operator.kubeconfig,
        },
      },
    },
  );
  const started = await startCapiOperator(config);
  operator = started.process;
  api = started.api;
  const extension = started.extension;
  const pem = (f: string): Promise<string> => readFile(join(fleet.pki.dir, f), 'utf8');
  tls = new Agent({
    connect: {
      ca: await pem('ca.pem'),
      cert: await pem('operator.pem'),
      key: await pem('operator.key'),
    },
  });
  // Registered as a person would: what `molt capi extension-config` prints.
  const registration = parse(
    await molt(
      ...['capi', 'extension-config', '--url', extension],
      ...['--ca', join(fleet.pki.dir, 'ca.pem')],
    ),
  ) as Obj;
  await mgmt.create(registration);
  for (const o of workloadCluster(kubeVersion['1.0.0'])) await mgmt.create(o);
  controlPlane = await mgmt.controlPlaneReady(180_000);
  await mgmt.annotate(controlPlane.metadata.name, { 'molt.dev/machine': 'cp-1' });
  worker = await mgmt.oneWorker(180_000);
  await mgmt.annotate(worker.metadata.name, { 'molt.dev/machine': 'w-1' });
  pair = await mgmt.workersReady('c1-md2', 2, 180_000);
  for (const [i, m] of pair.entries())
    await mgmt.annotate(m.metadata.name, { 'molt.dev/machine': `w-${String(i + 2)}` });
  const [fourth] = await mgmt.workersReady('c1-md3', 1, 180_000);
  assert.ok(fourth);
  await mgmt.annotate(fourth.metadata.name, { 'molt.dev/machine': 'w-4' });
});

after(async () => {
  await (tls as Agent | undefined)?.close();
  await (operator as ManagedProcess | undefined)?.stop(10_000);
  await (fleet as LabFleet | undefined)?.stop();
  await (capi as CapiManagement | undefined)?.stop();
  await (kube as KubeControlPlane | undefined)?.stop();
});

describe('molt as the Cluster API in-place update extension', () => {
  it('updates the KubeadmControlPlane’s Machine in place through molt (CanUpdateMachine): cp-1 reboots into slot B, etcd whole, UpToDate', async () => {
    const name = controlPlane.metadata.name;
    const version = kubeVersion['1.1.0'];
    await mgmt.patchControlPlane({ version });
    const id = `capi-cp-1-${version}`;
    await eventually(
      async () => {
        assert.equal((await rollout(id))?.state, 'Completed');
      },
      { timeoutMs: 240_000, intervalMs: 1_000 },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${operator.output().split('\n').slice(-15).join('\n')}`);
    });
    const now = await agent('cp-1');
    assert.deepEqual([now.version, now.bootedSlot, now.boot.committed], ['1.1.0', 'B', 'B']);
    await waitClusterHealthy(fleet.cluster.endpoints, 60_000);
    await reportKubelet(
      await mgmt.workloadNodes(),
      controlPlane.status?.nodeRef?.name ?? '',
      version,
    );
    const done = await machineWhen(
      name,
      (m) => conditionOf(m, 'UpToDate')?.status === 'True',
      90_000,
    );
    assert.equal(done.spec.version, version);
  });

  it('updates the MachineDeployment’s Machine in place through molt: held first, then w-1 reboots into slot B; the Machine ends UpToDate', async () => {
    const name = worker.metadata.name;
    const before = await w1();
    assert.deepEqual([before.version, before.bootedSlot], ['1.0.0', 'A']);
    await operatorApi('POST', '/v1/machines/w-1/hold', { reason: 'disk check', for: '1h' });
    await mgmt.patchMachineDeployment({ version: kubeVersion['1.1.0'] });
    const id = `capi-w-1-${kubeVersion['1.1.0']}`;
    // CAPI asked, molt patched, CAPI kept the Machine and called UpdateMachine: the rollout exists…
    await eventually(
      async () => {
        assert.ok(await rollout(id), 'no targeted rollout yet');
      },
      {
        timeoutMs: 120_000,
        intervalMs: 1_000,
      },
    );
    // …and the hold keeps w-1 where it is while CAPI keeps asking, pass after pass.
    await afterPasses({ metrics }, 5);
    const { counts } = RolloutSummaryView.parse(await rollout(id));
    assert.deepEqual(
      [counts.InFlight, counts.Succeeded, counts.Failed, counts.RolledBack],
      [0, 0, 0, 0],
      'a held machine is not started',
    );
    assert.equal((await w1()).bootId, before.bootId, 'a held machine is not rebooted');
    const updating = await machineWhen(
      name,
      (m) => conditionOf(m, 'Updating')?.status === 'True',
      // CAPI marks it at its own pace, which a count of molt's passes does not bound.
      25_000,
    );
    assert.equal(conditionOf(updating, 'Updating')?.reason, 'InPlaceUpdating');
    await operatorApi('POST', '/v1/machines/w-1/release', {});
    await eventually(
      async () => {
        assert.equal((await rollout(id))?.state, 'Completed');
      },
      {
        timeoutMs: 180_000,
        intervalMs: 1_000,
      },
    );
    const after = await w1();
    assert.deepEqual([after.version, after.bootedSlot, after.boot.committed], ['1.1.0', 'B', 'B']);
    await machineWhen(name, (m) => conditionOf(m, 'Updating')?.status === 'False', 60_000);
    const nodes = await mgmt.workloadNodes();
    await reportKubelet(nodes, worker.status?.nodeRef?.name ?? '', kubeVersion['1.1.0']);
    const done = await machineWhen(
      name,
      (m) => conditionOf(m, 'UpToDate')?.status === 'True',
      60_000,
    );
    assert.equal(done.spec.version, kubeVersion['1.1.0']);
    assert.deepEqual(
      (await mgmt.workers()).map((m) => m.metadata.name),
      [name],
      'not replaced',
    );
  });

  it('moves two Machines Cluster API asks for at once one at a time, as the pool’s concurrency 1 says', async () => {
    const version = kubeVersion['1.1.0'];
    await mgmt.patchMachineDeployment({ version }, 'c1-md2');
    const ids = ['w-2', 'w-3'].map((m) => `capi-${m}-${version}`);
    const views = await eventually(
      async () => {
        const all = await Promise.all(
          ids.map(async (id) => RolloutView.parse(await operatorApi('GET', `/v1/rollouts/${id}`))),
        );
        assert.deepEqual(
          all.map((r) => r.state),
          ['Completed', 'Completed'],
        );
        return all;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${operator.output().split('\n').slice(-15).join('\n')}`);
    });
    const spans = views.map((r, i) => {
      const p = r.machines.find((m) => m.machine === `w-${String(i + 2)}`);
      return [Date.parse(p?.startedAt ?? ''), Date.parse(p?.finishedAt ?? '')] as const;
    });
    // CAPI asked for both before the first was done: both rollouts existed at once…
    const created = views.map((r) => Date.parse(r.createdAt));
    assert.ok(
      Math.max(...created) < Math.min(...spans.map(([, end]) => end)),
      JSON.stringify({ created, spans }),
    );
    // …and molt ran them one after the other.
    assert.equal(maxOverlap(spans), 1, JSON.stringify(spans));
    const nodes = await mgmt.workloadNodes();
    for (const [i, m] of pair.entries()) {
      const now = await agent(`w-${String(i + 2)}`);
      assert.deepEqual([now.version, now.bootedSlot], ['1.1.0', 'B']);
      await reportKubelet(nodes, m.status?.nodeRef?.name ?? '', version);
    }
    for (const m of pair)
      await machineWhen(
        m.metadata.name,
        (x) => conditionOf(x, 'UpToDate')?.status === 'True',
        60_000,
      );
    assert.deepEqual(
      (await mgmt.workers('c1-md2')).map((m) => m.metadata.name).sort(),
      pair.map((m) => m.metadata.name).sort(),
      'not replaced',
    );
  });

  it('lets Cluster API replace the Machine when the change is not molt’s to make, touching no molt machine', async () => {
    const name = worker.metadata.name;
    const before = await w1();
    await mgmt.patchMachineDeployment({
      infrastructureRef: {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'DevMachineTemplate',
        name: 'c1-md-2', // another VM spec: not molt's to change
      },
    });
    worker = await mgmt.oneWorker(180_000, name);
    assert.notEqual(worker.metadata.name, name, 'a new Machine');
    const now = await w1();
    assert.equal(now.bootId, before.bootId, 'w-1 not rebooted');
    const all = (await operatorApi('GET', '/v1/rollouts')) as { id: string }[];
    assert.deepEqual(
      all.map((r) => r.id).filter((r) => r.startsWith('capi-w-1')),
      [`capi-w-1-${kubeVersion['1.1.0']}`],
      'no rollout for the replacement',
    );
    // The replacement is the machine re-imaged onto w-1 (on real hardware, the same box): map it.
    await mgmt.annotate(worker.metadata.name, { 'molt.dev/machine': 'w-1' });
  });

  it('rolls w-1 back by itself when the release never becomes healthy, tells Cluster API, and hands the Machine back for replacement', async () => {
    await fleet.publish('1.2.0', {
      ...official,
      'dev.molt.channels': 'stable',
      'dev.molt.kubernetes.version': kubeVersion['1.2.0'],
      'dev.molt.lab.health': 'never',
    });
    const name = worker.metadata.name;
    await mgmt.patchMachineDeployment({ version: kubeVersion['1.2.0'] });
    // molt answers Failure, writes its condition and deletes the Machine (capi.onFailure
    // remediate), so its MachineSet replaces it instead of CAPI retrying for ever.
    const seen = new Set<string>();
    await eventually(
      async () => {
        const m = (await mgmt.machines()).find((x) => x.metadata.name === name);
        for (const type of ['Updating', 'MoltInPlaceUpdate']) {
          const c = m === undefined ? undefined : conditionOf(m, type);
          if (c !== undefined) seen.add(`${type}=${c.status}/${c.reason ?? ''}`);
        }
        assert.ok(m === undefined || m.metadata.deletionTimestamp !== undefined, 'not deleted yet');
      },
      { timeoutMs: 240_000, intervalMs: 500 },
    );
    const now = await w1();
    assert.deepEqual([now.version, now.bootedSlot, now.last?.result], ['1.1.0', 'B', 'RolledBack']);
    assert.match(
      operator.output(),
      new RegExp(`Machine demo/${name} failed its in-place update; deleted it`),
    );
    assert.ok(
      seen.has('Updating=True/InPlaceUpdating') || seen.has('MoltInPlaceUpdate=Unknown/InProgress'),
      [...seen].join(', '),
    );
    const next = await mgmt.oneWorker(180_000, name);
    assert.notEqual(next.metadata.name, name, 'replaced by a new Machine');
  });

  it('asks Cluster API to replace a machine of a replace pool, and finishes once the new Machine runs the release', async () => {
    const [old] = await mgmt.workers('c1-md3');
    assert.ok(old);
    await fleet.publish('1.3.0', { ...official, 'dev.molt.channels': 'edge' });
    // molt hands the Machine back (deleted: its MachineSet makes a new one)…
    const next = await mgmt.oneWorkerOf('c1-md3', 180_000, old.metadata.name);
    // …and the test plays the infrastructure provider: a molt-aware one installs the release on
    // the machine it provisions and maps the new Machine to it.
    await fleet.reimage('w-4', fleet.image('1.3.0'));
    await mgmt.annotate(next.metadata.name, { 'molt.dev/machine': 'w-4' });
    const done = await eventually(
      async () => {
        const all = (await operatorApi('GET', '/v1/rollouts')) as {
          id: string;
          pool: string;
          state: string;
        }[];
        const r = all.find((x) => x.pool === 'replaced');
        assert.equal(r?.state, 'Completed', JSON.stringify(r));
        return r;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${operator.output().split('\n').slice(-15).join('\n')}`);
    });
    assert.ok(done);
    const now = await agent('w-4');
    assert.deepEqual(
      [now.version, now.bootedSlot],
      ['1.3.0', 'A'],
      're-imaged, not upgraded in place',
    );
    assert.equal(
      (await mgmt.machines()).find((m) => m.metadata.name === old.metadata.name),
      undefined,
    );
  });
});
