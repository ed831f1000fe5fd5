// SPDX-License-Identifier: Apache-2.0
// The operator config's `store:` (protocol/store-config.ts, docs/adr/0016): its four forms, a
// value of none of them refused listing the forms, a wrong value inside one form refused naming
// the field — and `store: kubernetes` (or a `kubernetes:` section) without a kubeconfig meaning the
// pod's service account, refused at start outside a pod.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadOperatorConfig } from './config.ts';
import { kubeParts } from './compose-kube.ts';
import { stateOf } from './compose-store.ts';

describe("the operator config's store", () => {
  let dir: string;
  const load = async (store: unknown, more: object = {}) => {
    const path = join(dir, 'operator.yaml');
    const pki = { ca: 'ca.pem', cert: 'ca.pem', key: 'ca.pem' };
    await writeFile(
      path,
      stringify({ registry: 'r', repository: 'r', fleet: 'fleet.yaml', pki, store, ...more }),
    );
    return { path, loaded: await loadOperatorConfig(path) };
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'molt-store-config-'));
    await writeFile(join(dir, 'ca.pem'), 'not read as PEM here');
    await writeFile(join(dir, 'fleet.yaml'), stringify({ pools: [{ name: 'w' }], machines: [] }));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads memory, etcd, kubernetes and kubernetes with a kubeconfig and namespace', async () => {
    const store = async (v: unknown) => (await load(v)).loaded.config.store;
    assert.equal(await store('memory'), 'memory');
    assert.deepEqual(await store({ etcd: ['http://127.0.0.1:2379'] }), {
      etcd: ['http://127.0.0.1:2379'],
    });
    assert.deepEqual(await store('kubernetes'), { kubernetes: {} });
    const full = { kubernetes: { kubeconfig: 'op.kubeconfig', namespace: 'ops' } };
    assert.deepEqual(await store(full), full);
  });

  it('refuses a value of no form with MOLT_CONFIG_INVALID, listing the forms', async () => {
    for (const bad of ['kubernets', { mysql: ['x'] }, 3, { etcd: ['http://a:1'], kubernetes: {} }])
      await assert.rejects(load(bad), {
        code: 'MOLT_CONFIG_INVALID',
        message:
          /store: one of memory, kubernetes, \{etcd: \[http:\/\/host:2379, \.\.\.\]\} or \{kubernetes: \{kubeconfig\?, namespace\?\}\}$/,
      });
  });

  it('refuses a wrong value inside a form, naming the field', async () => {
    await assert.rejects(load({ kubernetes: { namespace: 'Molt_System' } }), {
      code: 'MOLT_CONFIG_INVALID',
      message: /store\.kubernetes\.namespace: a namespace name \(DNS-1123 label\)$/,
    });
    await assert.rejects(load({ kubernetes: { kubeconfg: 'x' } }), {
      code: 'MOLT_CONFIG_INVALID',
      message: /store\.kubernetes: Unrecognized key: "kubeconfg"$/,
    });
    await assert.rejects(load({ etcd: [] }), {
      code: 'MOLT_CONFIG_INVALID',
      message: /store\.etcd: name at least one etcd endpoint$/,
    });
  });

  it("loads etcd's client only for the store that names etcd", async () => {
    const loadedEtcd = () =>
      Object.keys(createRequire(import.meta.url).cache).some((m) =>
        /node_modules\/etcd3\//.test(m),
      );
    const memory = await load('memory');
    const parts = await stateOf(memory.loaded, memory.path, 'op-1');
    await Promise.all([parts.store.close(), parts.leadership.close(), parts.fleetLock.close()]);
    assert.equal(loadedEtcd(), false, 'store: memory loaded etcd3');
    const etcd = await load({ etcd: ['http://127.0.0.1:1'] });
    const both = await stateOf(etcd.loaded, etcd.path, 'op-1');
    assert.equal(loadedEtcd(), true);
    await Promise.all([both.store.close(), both.leadership.close(), both.fleetLock.close()]);
  });

  it('refuses store: kubernetes outside a pod without a kubeconfig, saying what is missing', async () => {
    const saved = process.env['KUBERNETES_SERVICE_HOST'];
    Reflect.deleteProperty(process.env, 'KUBERNETES_SERVICE_HOST');
    try {
      const { path, loaded } = await load('kubernetes');
      await assert.rejects(stateOf(loaded, path, 'op-1'), {
        code: 'MOLT_KUBECONFIG_INVALID',
        message:
          'no kubeconfig given and not running in a pod: KUBERNETES_SERVICE_HOST/_PORT are not set',
      });
    } finally {
      if (saved !== undefined) process.env['KUBERNETES_SERVICE_HOST'] = saved;
    }
  });

  it('reads a kubernetes section without a kubeconfig as the pod identity, refused outside a pod', async () => {
    const saved = process.env['KUBERNETES_SERVICE_HOST'];
    Reflect.deleteProperty(process.env, 'KUBERNETES_SERVICE_HOST');
    try {
      const { path, loaded } = await load('memory', { kubernetes: { status: false } });
      assert.equal(loaded.config.kubernetes?.kubeconfig, undefined);
      await assert.rejects(
        kubeParts(loaded, path, 'op-1', () => undefined),
        {
          code: 'MOLT_KUBECONFIG_INVALID',
          message: /not running in a pod/,
        },
      );
    } finally {
      if (saved !== undefined) process.env['KUBERNETES_SERVICE_HOST'] = saved;
    }
  });

  it("elects the leader by one Lease: the store's, when the store is kubernetes", async () => {
    const kubeconfig = join(dir, 'op.kubeconfig');
    await writeFile(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const section = { kubeconfig: 'op.kubeconfig', leaderElection: true, status: false };
    const onKube = await load('kubernetes', { kubernetes: section });
    assert.equal(
      (await kubeParts(onKube.loaded, onKube.path, 'op-1', () => undefined)).leadership,
      undefined,
    );
    const onEtcd = await load({ etcd: ['http://127.0.0.1:1'] }, { kubernetes: section });
    const parts = await kubeParts(onEtcd.loaded, onEtcd.path, 'op-1', () => undefined);
    assert.ok(parts.leadership !== undefined, 'an etcd store leads by the Lease when asked');
    await parts.leadership.close();
  });

  it("takes the kubernetes section's kubeconfig when the store names none", async () => {
    const { path, loaded } = await load('kubernetes', {
      kubernetes: { kubeconfig: 'missing.kubeconfig' },
    });
    await assert.rejects(stateOf(loaded, path, 'op-1'), {
      code: 'MOLT_KUBECONFIG_INVALID',
      message: `cannot read the kubeconfig ${join(dir, 'missing.kubeconfig')}`,
    });
  });
});
