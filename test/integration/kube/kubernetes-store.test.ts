// SPDX-License-Identifier: Apache-2.0
// `store: kubernetes` on a real kube-apiserver (docs/adr/0016): the operator store and the
// FleetLock store held to the same conformance suites as the etcd and memory adapters, as the
// operator's own identity under deploy/kubernetes/operator-rbac.yaml (least privilege: its
// namespace's OperatorRecords only); then what only this store has — history pages that stay
// bounded without a gap in the seqs, a record edited by hand named when read, and a cluster
// without the CRD refused at start with what to apply.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { KubeFleetLockStore } from '../../../src/operator/adapters/kube-store/fleetlock.ts';
import {
  createKubeOperatorStore,
  openKubeOperatorStore,
} from '../../../src/operator/adapters/kube-store/operator-store.ts';
import { nameOf, Records } from '../../../src/operator/adapters/kube-store/records.ts';
import { history, pageKey } from '../../../src/operator/adapters/kube-store/history.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { fleetLockStoreConformance } from '../../../src/testkit/fleetlock-store-conformance.ts';
import { operatorStoreConformance } from '../../../src/testkit/operator-store-conformance.ts';
import {
  fresh,
  inFlight,
  machineFixture,
  rolloutFixture,
} from '../../../src/testkit/operator-store-fixtures.ts';
import { createFleetPki } from '../../../src/lab/fleet/machine.ts';
import {
  eventually,
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { moltEntry } from '../../../src/testkit/molt-entry.ts';
import { rejectsWithCode } from '../../../src/testkit/registry-conformance.ts';
import { ErrorCode } from '../../../src/core/errors.ts';
import { createKubeHealth } from '../../../src/operator/adapters/kube-health/index.ts';

const exec = promisify(execFile);
const namespace = 'molt-system';
const deploy = join(import.meta.dirname, '../../../deploy/kubernetes');

interface Cluster {
  readonly cp: KubeControlPlane;
  /** The operator's identity (user molt-operator under operator-rbac.yaml). */
  readonly kc: KubeConfig;
  readonly admin: KubeConfig;
  readonly kubectl: (...args: string[]) => Promise<string>;
}

let started: Promise<Cluster> | undefined;
/** One control plane for the whole file, started by the first suite that needs it. */
function cluster(): Promise<Cluster> {
  started ??= (async () => {
    const cp = await startKubeControlPlane();
    const kubectl = async (...args: string[]): Promise<string> =>
      (await exec(join(cp.bins, 'kubectl'), ['--kubeconfig', cp.admin.kubeconfig, ...args])).stdout;
    await kubectl('apply', '-f', join(deploy, 'operator-rbac.yaml'));
    return {
      cp,
      kubectl,
      kc: await loadKubeConfig(cp.operator.kubeconfig),
      admin: await loadKubeConfig(cp.admin.kubeconfig),
    };
  })();
  return started;
}

after(async () => {
  await (await started)?.cp.stop();
});

operatorStoreConformance({
  name: 'Kubernetes API (OperatorRecords)',
  async start() {
    const { kc } = await cluster();
    return {
      open: () => createKubeOperatorStore({ kc, namespace }),
      stop: () => Promise.resolve(),
    };
  },
});

fleetLockStoreConformance({
  name: 'Kubernetes API (OperatorRecords)',
  async start() {
    const { kc } = await cluster();
    return { open: () => new KubeFleetLockStore({ kc, namespace }), stop: () => Promise.resolve() };
  },
});

describe('the Kubernetes store', () => {
  it('keeps only the newest history pages, with no seq skipped or repeated across pages', async () => {
    const { admin, kubectl } = await cluster();
    const historyPages = { events: 4, kept: 3 };
    // A namespace of its own (as the admin): the conformance suite's history is in molt-system.
    const ns = `history-${String(process.pid)}`;
    await kubectl('create', 'namespace', ns);
    const [a, b] = [
      createKubeOperatorStore({ kc: admin, namespace: ns, historyPages }),
      createKubeOperatorStore({ kc: admin, namespace: ns, historyPages }),
    ];
    const seqs: number[] = [];
    for (let i = 0; i < 30; i++) {
      const writer = i % 3 === 0 ? b : a;
      seqs.push((await writer.appendHistory({ at: i, kind: 'decision', message: `e${i}` })).seq);
    }
    assert.deepEqual(
      seqs,
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
    assert.equal(await b.historyHead(), 30);
    // Pages of 4, three kept: seqs 25–30 (page 6 holds 25–28, page 7 29–30) and page 5's 21–24.
    const kept = await a.history();
    assert.deepEqual(
      kept.map((e) => e.seq),
      [21, 22, 23, 24, 25, 26, 27, 28, 29, 30],
    );
    assert.deepEqual(
      (await a.history({ afterSeq: 23, limit: 5 })).map((e) => e.seq),
      [24, 25, 26, 27, 28],
    );
    assert.deepEqual(await a.history({ afterSeq: 30 }), []);
    const pages = async (): Promise<string[]> =>
      (await kubectl('get', 'operatorrecords', '-n', ns, '-o', 'name')).trim().split('\n');
    assert.equal((await pages()).length, 3, (await pages()).join(', '));

    // A reader caught up at a page's end (32: page 7 full, page 8 not made yet) reads two pages,
    // not the whole history — the notifier asks this every pass.
    for (const i of [30, 31]) await a.appendHistory({ at: i, kind: 'decision', message: `e${i}` });
    const records = new Records({ kc: admin, namespace: ns });
    let lists = 0;
    const list = records.list.bind(records);
    records.list = (kinds) => {
      lists++;
      return list(kinds);
    };
    assert.deepEqual(await history(records, { pageEvents: 4, keptPages: 3 }, { afterSeq: 32 }), []);
    assert.equal(lists, 0, 'no list of every page');

    // A page a failed delete left behind goes with the next page's pruning.
    assert.equal(await records.create('history', pageKey(4), { events: [] }), 'created');
    await a.appendHistory({ at: 32, kind: 'decision', message: 'e32' });
    const left = await pages();
    assert.equal(left.length, 3, left.join(', '));
    assert.equal(await records.get('history', pageKey(4)), undefined, 'the leaked page is gone');
  });

  it('cuts an event too large for a page to its message head, keeping its seq', async () => {
    const { kc } = await cluster();
    const store = createKubeOperatorStore({ kc, namespace });
    const big = await store.appendHistory({
      at: 1,
      kind: 'warning',
      message: 'x'.repeat(40_000),
      data: { blob: 'y'.repeat(40_000) },
    });
    const [read] = await store.history({ afterSeq: big.seq - 1, limit: 1 });
    assert.equal(read?.seq, big.seq);
    assert.equal(read.message.length, 2_000);
    assert.deepEqual(Object.keys(read.data ?? {}), ['truncated']);
  });

  it('names a record edited by hand when it is read, with MOLT_STORE_CORRUPT', async () => {
    const { admin, kc } = await cluster();
    const id = fresh('bad');
    await admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'molt.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'operatorrecords',
      body: {
        apiVersion: 'molt.dev/v1alpha1',
        kind: 'OperatorRecord',
        metadata: { name: nameOf('machine', id), labels: { 'molt.dev/record': 'machine' } },
        spec: { kind: 'machine', key: id, data: { ...machineFixture(id), role: 'boss' } },
      },
    });
    const store = createKubeOperatorStore({ kc, namespace });
    await rejectsWithCode(store.read(), ErrorCode.StoreCorrupt, nameOf('machine', id));
    await store.removeMachine(id);
    await store.read();
  });
});

describe('molt operator with store: kubernetes', () => {
  let dir: string;
  let operator: ManagedProcess | undefined;
  const config = async (id: string): Promise<string> => {
    const { cp } = await cluster();
    const file = join(dir, `${id}.yaml`);
    await writeFile(
      file,
      stringify({
        // Nothing listens there: discovery fails, which the operator logs and retries.
        registry: '127.0.0.1:1',
        repository: 'acme/installer',
        insecure: true,
        fleet: join(dir, 'fleet.yaml'),
        pki: {
          ca: join(dir, 'pki/ca.pem'),
          cert: join(dir, 'pki/operator.pem'),
          key: join(dir, 'pki/operator.key'),
        },
        store: { kubernetes: { kubeconfig: cp.operator.kubeconfig } },
        id,
        interval: '1s',
        leaderTtl: '3s',
      }),
    );
    return file;
  };
  const start = async (id: string): Promise<ManagedProcess> =>
    startProcess(`molt operator ${id}`, process.execPath, [
      moltEntry,
      'operator',
      '--config',
      await config(id),
    ]);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'molt-kube-store-'));
    await createFleetPki(join(dir, 'pki'));
    await writeFile(
      join(dir, 'fleet.yaml'),
      stringify({
        pools: [{ name: 'workers', channel: 'stable' }],
        machines: [{ id: 'w-9', endpoint: 'https://127.0.0.1:1', pool: 'workers' }],
      }),
    );
  });
  after(async () => {
    await operator?.stop(10_000);
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps its machines and a rollout across a restart, leading by the Lease', async () => {
    const { kc, kubectl } = await cluster();
    operator = await start('op-1');
    await operator.waitFor(/leading as op-1/, 120_000);
    const store = createKubeOperatorStore({ kc, namespace });
    await eventually(async () => {
      assert.ok(
        (await store.read()).machines.some((m) => m.id === 'w-9'),
        operator?.output(),
      );
    });
    const holder = () =>
      kubectl(
        'get',
        'lease',
        'molt-operator',
        '-n',
        namespace,
        '-o',
        'jsonpath={.spec.holderIdentity}',
      );
    assert.equal(await holder(), 'op-1');
    // A rollout the leader was running when it stopped (written as the loop would).
    const id = fresh('workers');
    await store.createRollout({ ...rolloutFixture(id), state: 'Paused' });
    await store.recordStart(
      { machine: 'w-9', pool: 'workers', rollout: id, at: Date.now() },
      inFlight(Date.now()),
    );
    await operator.stop(10_000);
    assert.equal(await operator.exited, 0);
    assert.equal(await holder(), '', 'a stopping leader resigns its Lease');
    operator = await start('op-2');
    await operator.waitFor(/leading as op-2/, 120_000);
    await sleep(3_000); // a few passes of the new leader (interval 1s)
    const after = await store.read();
    const kept = after.rollouts.find((r) => r.id === id);
    assert.equal(kept?.machines['w-9']?.phase, 'InFlight', operator.output());
    assert.deepEqual(
      after.starts.filter((s) => s.rollout === id).map((s) => s.machine),
      ['w-9'],
    );
    assert.equal(await holder(), 'op-2');
    await operator.stop(10_000);
    operator = undefined;
  });

  it('stops at start without the CRD, saying exactly what is missing, without a stack trace', async () => {
    const { kc, kubectl } = await cluster();
    await kubectl('delete', 'crd', 'operatorrecords.molt.dev', '--wait=true');
    const e = await openKubeOperatorStore({ kc, namespace }).then(
      () => assert.fail('opened without the CRD'),
      (err: unknown) => err as { code?: string; message?: string },
    );
    assert.equal(e.code, ErrorCode.StoreUnavailable);
    assert.equal(
      e.message,
      'the CRD operatorrecords.molt.dev is not installed: kubectl apply -k deploy/kubernetes',
    );
    const proc = await start('op-3');
    assert.notEqual(await proc.exited, 0);
    const out = proc.output();
    assert.match(
      out,
      /MOLT_STORE_UNAVAILABLE.*the CRD operatorrecords\.molt\.dev is not installed: kubectl apply -k deploy\/kubernetes/,
    );
    assert.doesNotMatch(out, /^\s+at /m, 'no stack trace');
  });
});

describe('the operator identity under operator-rbac.yaml, for a Kubernetes upgrade', () => {
  it('may read what the upgrade checks: the API server’s /metrics and the control plane’s Leases', async () => {
    const { kc } = await cluster();
    const health = createKubeHealth({ kc, timeoutMs: 5_000, intervalMs: 200 });
    assert.match(
      (await health.metrics('test')) ?? '',
      /^# (HELP|TYPE) /m,
      'the metrics text, not a 403',
    );
    const since = Date.now() - 3_600_000;
    for (const component of ['kube-controller-manager', 'kube-scheduler'] as const) {
      const verdict = await health.afterApply({ cluster: 'test', component, since });
      assert.ok(verdict.ok, `${component}: ${verdict.message}`);
    }
  });
});
