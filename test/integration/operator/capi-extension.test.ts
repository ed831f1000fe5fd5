// SPDX-License-Identifier: Apache-2.0
// Issue 20 (docs/adr/0014) through the real `molt operator` process: its Cluster API extension
// listener answers CAPI's hooks over HTTPS as CAPI v1.14 sends them (no Content-Type; the requests
// are the ones captured live from a real management plane, renamed to a molt machine): discovery
// lists three `Fail` handlers; CanUpdateMachine patches `/spec/version` only when a release in the
// real registry carries that Kubernetes version (`dev.molt.kubernetes.version`), else answers
// Success without a patch (CAPI replaces); UpdateMachine records one targeted rollout of that
// machine, seen in `GET /v1/rollouts`; an unknown hook is a 404 in CAPI's shape. The Machine is
// molt's by molt's own read of it on a real API server (a minimal Machine CRD: the CAPI managers
// are not needed), annotated `molt.dev/machine: w-1` in Cluster demo/c1, mapped to the pool; only
// a caller with a client certificate from `capi.clientCa` is answered.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { stringify } from 'yaml';
import type { z } from 'zod';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { initCaDir, issueToDir } from '../../../src/platform/pki/store.ts';
import { tempDir, type ManagedProcess } from '../../../src/platform/process/managed-process.ts';
import { RolloutSummaryView } from '../../../src/protocol/operator.ts';
import {
  CanUpdateMachineResponse,
  DiscoveryResponse,
  HookFailure,
  UpdateMachineResponse,
} from '../../../src/protocol/capi-hooks.ts';
import { publishRelease } from '../../../src/releases/publish.ts';
import { startCapiOperator } from '../../../src/testkit/capi-operator.ts';
import { startRegistry, type TestRegistry } from '../../../src/testkit/registry-process.ts';

const fixture = async (name: string): Promise<Record<string, unknown>> =>
  JSON.parse(
    await readFile(
      join(import.meta.dirname, '../../../src/operator/capi/testdata', `${name}.json`),
      'utf8',
    ),
  ) as Record<string, unknown>;

let registry: TestRegistry;
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

/** A captured request, its Machines renamed to the molt machine `w-1`, desired at `version`. */
function asMachine(req: Record<string, unknown>, version: string): Record<string, unknown> {
  const text = JSON.stringify(req).replaceAll(/"name":"c1-cp-[a-z0-9]+"/g, '"name":"w-1"');
  const out = JSON.parse(text) as {
    desired: { machine: { spec: { version?: string } } };
  } & Record<string, unknown>;
  out.desired.machine.spec.version = version;
  return out;
}

/** POST as CAPI does (JSON, no Content-Type): the status and the body parsed by `schema`. */
async function post<S extends z.ZodType>(
  path: string,
  body: unknown,
  schema: S,
): Promise<{ status: number; json: z.output<S> }> {
  const res = await request(`${extension}${path}?timeout=10s`, {
    method: 'POST',
    body: JSON.stringify(body),
    dispatcher: tls,
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

describe('the Cluster API extension of the molt operator process', () => {
  before(async () => {
    registry = await startRegistry();
    kube = await startKubeControlPlane();
    scratch = await tempDir('capi-extension');
    await apply(machineCrd);
    await promisify(execFile)(join(kube.bins, 'kubectl'), [
      ...['--kubeconfig', kube.admin.kubeconfig, 'wait', '--for=condition=Established'],
      ...['--timeout=60s', 'crd/machines.cluster.x-k8s.io'],
    ]);
    await apply(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } },
      {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: { name: 'w-1', namespace: 'demo', annotations: { 'molt.dev/machine': 'w-1' } },
        spec: { clusterName: 'c1', version: 'v1.35.0' },
      },
    );
    const pki = join(scratch.path, 'pki');
    await initCaDir(pki);
    for (const [role, name] of [
      ['operator', 'operator'],
      ['node', 'operator-api'],
    ] as const)
      await issueToDir({ caDir: pki, outDir: pki, role, name, sans: [], days: 1 });
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    await publishRelease({
      client,
      repository: 'molt/installer',
      tags: ['1.1.0'],
      labels: { version: '1.1.0', extra: { 'dev.molt.kubernetes.version': 'v1.35.0' } },
    }).finally(() => client.close());
    await writeFile(
      join(scratch.path, 'fleet.yaml'),
      stringify({
        // No channel: the pool moves only when Cluster API asks.
        pools: [{ name: 'control-plane', policies: [{ concurrency: 1 }] }],
        machines: [
          {
            id: 'w-1',
            endpoint: 'https://127.0.0.1:1',
            pool: 'control-plane',
            role: 'control-plane',
          },
        ],
      }),
    );
    const config = join(scratch.path, 'operator.yaml');
    await writeFile(
      config,
      stringify({
        ...{ registry: registry.host, repository: 'molt/installer', insecure: true },
        fleet: 'fleet.yaml',
        pki: {
          ...{ ca: 'pki/ca.pem', cert: 'pki/operator.pem', key: 'pki/operator.key' },
          ...{ serverCert: 'pki/operator-api.pem', serverKey: 'pki/operator-api.key' },
        },
        store: 'memory',
        listen: { host: '127.0.0.1', port: 0 },
        capi: {
          listen: { host: '127.0.0.1', port: 0 },
          // CAPI's client certificate here is the operator's, from the fleet CA.
          clientCa: 'pki/ca.pem',
          clusters: { 'demo/c1': 'control-plane' },
          kubeconfig: kube.admin.kubeconfig,
        },
      }),
    );
    const started = await startCapiOperator(config);
    operator = started.process;
    api = started.api;
    extension = started.extension;
    const read = (f: string): Promise<string> => readFile(join(pki, f), 'utf8');
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
    await registry.stop();
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
    const yes = await post(at, asMachine(req, 'v1.35.0'), CanUpdateMachineResponse);
    assert.equal(yes.json.status, 'Success');
    const patch = yes.json.machinePatch?.patch ?? '';
    assert.deepEqual(JSON.parse(Buffer.from(patch, 'base64').toString()), [
      { op: 'replace', path: '/spec/version', value: 'v1.35.0' },
    ]);
    const no = await post(at, asMachine(req, 'v1.36.0'), CanUpdateMachineResponse);
    assert.deepEqual([no.json.status, no.json.machinePatch], ['Success', undefined]);
  });

  it('records one targeted rollout for UpdateMachine, and answers 404 for an unknown hook', async () => {
    const at = `${hooks}/updatemachine/${await handlerOf('UpdateMachine')}`;
    const req = asMachine(await fixture('updatemachine.kcp-machine.request'), 'v1.35.0');
    for (let i = 0; i < 2; i++) {
      const r = await post(at, req, UpdateMachineResponse);
      assert.deepEqual([r.json.status, r.json.retryAfterSeconds], ['Success', 10], r.json.message);
    }
    const res = await request(`${api}/v1/rollouts`, { dispatcher: tls });
    const rollouts = RolloutSummaryView.array().parse(await res.body.json());
    assert.deepEqual(
      rollouts.map((r) => [r.id, r.pool, r.target.version]),
      [['capi-w-1-v1.35.0', 'control-plane', '1.1.0']],
    );
    const unknown = await post(`${hooks}/beforeclustercreate/x`, {}, HookFailure);
    assert.equal(unknown.status, 404);
  });
});
