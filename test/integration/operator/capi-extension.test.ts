// SPDX-License-Identifier: Apache-2.0
// Issue 20 (docs/adr/0014) through the real `molt operator` process: its Cluster API extension
// listener answers CAPI's hooks over HTTPS as CAPI v1.14 sends them (no Content-Type; the requests
// are the ones captured live from a real management plane, renamed to a molt machine): discovery
// lists three `Fail` handlers; CanUpdateMachine patches `/spec/version` only when a release in the
// real registry carries that Kubernetes version (`dev.molt.kubernetes.version`) and may go to the
// machine as discovery would let it (official, in a channel, newer than the release the machine's
// agent reports), else answers Success without a patch (CAPI replaces); UpdateMachine records one
// targeted rollout of that machine, seen in `GET /v1/rollouts`, and answers done once the machine
// booted the release; an unknown hook is a 404 in CAPI's shape. The molt machine is a lab machine
// (`w-1`, real agent on release 1.0.0). The Machine is molt's by molt's own read of it on a real
// API server (a minimal Machine CRD: the CAPI managers are not needed), annotated
// `molt.dev/machine: w-1` in Cluster demo/c1, mapped to the pool; a decoy Machine annotated the
// same in another namespace (Cluster tenant-a/c1, not mapped) gets no patch and no rollout; only a
// caller with a client certificate from `capi.clientCa` is answered.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import type { z } from 'zod';
import { official, startLabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';
import { agentStatus } from '../../../src/lab/fleet/machine.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { issueOperatorApiCert } from '../../../src/lab/fleet/operator-pki.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import {
  eventually,
  tempDir,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { RolloutSummaryView } from '../../../src/protocol/operator.ts';
import {
  CanUpdateMachineResponse,
  DiscoveryResponse,
  HookFailure,
  UpdateMachineResponse,
} from '../../../src/protocol/capi-hooks.ts';
import { startCapiOperator } from '../../../src/testkit/capi-operator.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const fixture = async (name: string): Promise<Record<string, unknown>> =>
  JSON.parse(
    await readFile(
      join(import.meta.dirname, '../../../src/operator/capi/testdata', `${name}.json`),
      'utf8',
    ),
  ) as Record<string, unknown>;

let fleet: WorkerFleet;
let kube: KubeControlPlane;

/** Enough of CAPI's Machine CRD for molt to read a Machine (the schema is CAPI's business). */
const machineCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'machines.cluster.x-k8s.io' },
  spec: {
    group: 'cluster.x-k8s.io',
    names: { kind: 'Machine', plural: 'machines', singular: 'machine', listKind: 'MachineList' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1beta2',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    ],
  },
};

/** A Machine in Cluster `<namespace>/c1` that names molt machine w-1 by its annotation. */
const machineObject = (namespace: string, name: string) => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  metadata: { name, namespace, annotations: { 'molt.dev/machine': 'w-1' } },
  spec: { clusterName: 'c1', version: 'v1.35.0' },
});

/** `kubectl apply` of `objects` as the API server's admin. */
async function apply(...objects: unknown[]): Promise<void> {
  const file = join(scratch.path, `apply-${String(Date.now())}.json`);
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  await promisify(execFile)(join(kube.bins, 'kubectl'), [
    ...['--kubeconfig', kube.admin.kubeconfig, 'apply', '-f', file],
  ]);
}
let scratch: { path: string; remove(): Promise<void> };
let operator: ManagedProcess;
let tls: Agent;
let extension: string;
let api: string;

/**
 * A captured request, its Machines renamed to `namespace/name` (default: demo/w-1, the Machine of
 * molt machine w-1), desired at `version`.
 */
function asMachine(
  req: Record<string, unknown>,
  version: string,
  at: { namespace: string; name: string } = { namespace: 'demo', name: 'w-1' },
): Record<string, unknown> {
  const text = JSON.stringify(req)
    .replaceAll(/"name":"c1-cp-[a-z0-9]+"/g, `"name":"${at.name}"`)
    .replaceAll('"namespace":"demo"', `"namespace":"${at.namespace}"`);
  const out = JSON.parse(text) as {
    desired: { machine: { spec: { version?: string } } };
  } & Record<string, unknown>;
  out.desired.machine.spec.version = version;
  return out;
}
const decoy = { namespace: 'tenant-a', name: 'decoy' };

/** POST as CAPI does (JSON, no Content-Type): the status and the body parsed by `schema`. */
async function post<S extends z.ZodType>(
  path: string,
  body: unknown,
  schema: S,
  dispatcher: Agent = tls,
): Promise<{ status: number; json: z.output<S> }> {
  const res = await request(`${extension}${path}?timeout=10s`, {
    method: 'POST',
    body: JSON.stringify(body),
    dispatcher,
  });
  return { status: res.statusCode, json: schema.parse(await res.body.json()) };
}

const hooks = '/hooks.runtime.cluster.x-k8s.io/v1alpha1';

/** The handler name discovery gives `hook`. */
async function handlerOf(hook: string): Promise<string> {
  const d = await post(`${hooks}/discovery`, {}, DiscoveryResponse);
  const h = d.json.handlers.find((x) => x.requestHook.hook === hook);
  assert.ok(h, hook);
  return h.name;
}

/** Every rollout the operator's API lists: id, pool, target version. */
async function rollouts(): Promise<string[][]> {
  const res = await request(`${api}/v1/rollouts`, { dispatcher: tls });
  return RolloutSummaryView.array()
    .parse(await res.body.json())
    .map((r) => [r.id, r.pool, r.target.version]);
}

describe('the Cluster API extension of the molt operator process', () => {
  before(async () => {
    kube = await startKubeControlPlane();
    scratch = await tempDir('capi-extension');
    await apply(machineCrd);
    await promisify(execFile)(join(kube.bins, 'kubectl'), [
      ...['--kubeconfig', kube.admin.kubeconfig, 'wait', '--for=condition=Established'],
      ...['--timeout=60s', 'crd/machines.cluster.x-k8s.io'],
    ]);
    await apply(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: decoy.namespace } },
      machineObject('demo', 'w-1'),
      // A tenant's own Machine naming the production machine: its Cluster is not mapped.
      machineObject(decoy.namespace, decoy.name),
    );
    // One lab machine, w-1, on release 1.0.0 (official, channels stable and beta).
    fleet = await startLabFleet({ molt: moltArgv, workers: 1, controlPlane: false });
    await fleet.publish('1.1.0', {
      ...official,
      // In a channel: a release in none is offered to no pool, Cluster API's included.
      'dev.molt.channels': 'stable',
      'dev.molt.kubernetes.version': 'v1.35.0',
    });
    const config = await writeOperatorFiles(fleet, {
      // No channel: the pool moves only when Cluster API asks.
      pools: [{ name: 'workers', policies: [{ concurrency: 1 }] }],
      config: {
        pki: await issueOperatorApiCert(fleet.pki.dir),
        listen: { host: '127.0.0.1', port: 0 },
        capi: {
          listen: { host: '127.0.0.1', port: 0 },
          // CAPI's client certificate here is the operator's, from the fleet CA.
          clientCa: join(fleet.pki.dir, 'ca.pem'),
          clusters: { 'demo/c1': 'workers' },
          kubeconfig: kube.admin.kubeconfig,
        },
      },
    });
    const started = await startCapiOperator(config);
    operator = started.process;
    api = started.api;
    extension = started.extension;
    const read = (f: string): Promise<string> => readFile(join(fleet.pki.dir, f), 'utf8');
    tls = new Agent({
      connect: {
        ca: await read('ca.pem'),
        cert: await read('operator.pem'),
        key: await read('operator.key'),
      },
    });
  });
  after(async () => {
    await tls.close();
    await operator.stop(10_000);
    await fleet.stop();
    await kube.stop();
    await scratch.remove();
  });

  it('answers discovery with three Fail handlers, with no Content-Type sent', async () => {
    const r = await post(
      `${hooks}/discovery`,
      await fixture('discovery.request'),
      DiscoveryResponse,
    );
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.json.handlers.map((h) => [h.requestHook.hook, h.failurePolicy]),
      [
        ['CanUpdateMachine', 'Fail'],
        ['CanUpdateMachineSet', 'Fail'],
        ['UpdateMachine', 'Fail'],
      ],
    );
  });

  it('patches the version of a molt machine only when a release carries it', async () => {
    const at = `${hooks}/canupdatemachine/${await handlerOf('CanUpdateMachine')}`;
    const req = await fixture('canupdatemachine.kcp-version.request');
    // Once the operator has seen w-1's agent report 1.0.0, 1.1.0 is one step from there.
    const yes = await eventually(
      async () => {
        const r = await post(at, asMachine(req, 'v1.35.0'), CanUpdateMachineResponse);
        assert.ok(r.json.machinePatch, r.json.message);
        return r;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    assert.equal(yes.json.status, 'Success');
    const patch = yes.json.machinePatch?.patch ?? '';
    assert.deepEqual(JSON.parse(Buffer.from(patch, 'base64').toString()), [
      { op: 'replace', path: '/spec/version', value: 'v1.35.0' },
    ]);
    const no = await post(at, asMachine(req, 'v1.36.0'), CanUpdateMachineResponse);
    assert.deepEqual([no.json.status, no.json.machinePatch], ['Success', undefined]);
  });

  it('refuses a caller without a client certificate in the TLS handshake: nothing recorded', async () => {
    const anonymous = new Agent({
      connect: { ca: await readFile(join(fleet.pki.dir, 'ca.pem'), 'utf8') },
    });
    const at = `${hooks}/updatemachine/${await handlerOf('UpdateMachine')}`;
    // w-1's release is known by now (the test before): answered, this would record its rollout.
    const req = asMachine(await fixture('updatemachine.kcp-machine.request'), 'v1.35.0');
    try {
      await assert.rejects(
        request(`${extension}${at}?timeout=10s`, {
          method: 'POST',
          body: JSON.stringify(req),
          dispatcher: anonymous,
        }),
        (e: Error & { code?: string }) => {
          // The server is there and hung up in the handshake, not an absent listener.
          assert.notEqual(e.code, 'ECONNREFUSED', String(e));
          return true;
        },
      );
    } finally {
      await anonymous.close();
    }
    assert.deepEqual(await rollouts(), []);
  });

  it('gives a decoy Machine naming w-1 from an unmapped Cluster neither a patch nor a rollout', async () => {
    const can = await post(
      `${hooks}/canupdatemachine/${await handlerOf('CanUpdateMachine')}`,
      asMachine(await fixture('canupdatemachine.kcp-version.request'), 'v1.35.0', decoy),
      CanUpdateMachineResponse,
    );
    assert.deepEqual([can.json.status, can.json.machinePatch], ['Success', undefined]);
    assert.match(can.json.message ?? '', /tenant-a\/c1/);
    const update = await post(
      `${hooks}/updatemachine/${await handlerOf('UpdateMachine')}`,
      asMachine(await fixture('updatemachine.kcp-machine.request'), 'v1.35.0', decoy),
      UpdateMachineResponse,
    );
    assert.equal(update.json.status, 'Failure');
    assert.match(update.json.message ?? '', /does not manage/);
    assert.deepEqual(await rollouts(), []);
  });

  it('records one targeted rollout for UpdateMachine, done once w-1 booted it; 404 for an unknown hook', async () => {
    const at = `${hooks}/updatemachine/${await handlerOf('UpdateMachine')}`;
    const req = asMachine(await fixture('updatemachine.kcp-machine.request'), 'v1.35.0');
    for (let i = 0; i < 2; i++) {
      const r = await post(at, req, UpdateMachineResponse);
      assert.deepEqual([r.json.status, r.json.retryAfterSeconds], ['Success', 10], r.json.message);
    }
    assert.deepEqual(await rollouts(), [['capi-w-1-v1.35.0', 'workers', '1.1.0']]);
    const done = await eventually(
      async () => {
        const r = await post(at, req, UpdateMachineResponse);
        assert.deepEqual([r.json.status, r.json.retryAfterSeconds], ['Success', 0], r.json.message);
        return r;
      },
      { timeoutMs: 120_000, intervalMs: 1_000 },
    );
    assert.match(done.json.message ?? '', /1\.1\.0/);
    const w1 = fleet.machines.find((m) => m.id === 'w-1');
    assert.ok(w1);
    assert.equal((await agentStatus(fleet.pki, w1.endpoint)).version, '1.1.0');
    const unknown = await post(`${hooks}/beforeclustercreate/x`, {}, HookFailure);
    assert.equal(unknown.status, 404);
  });
});
