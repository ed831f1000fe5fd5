// SPDX-License-Identifier: Apache-2.0
// Issue 18 (docs/adr/0012 §2–3): the hosted cluster's machines run kube-apiserver,
// kube-controller-manager and kube-scheduler from their machine configs on v1.35.4; the v1.36.3
// binaries are published as a Kubernetes bundle and pre-pulled on every machine without a
// restart; applying kube-apiserver v1.36.3 (emulating 1.35) on one machine restarts that one
// component only and it serves v1.36.3; an apply with a flag the binary refuses fails
// MOLT_KUBE_COMPONENT_UNHEALTHY and leaves the machine on its previous spec, healthy.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import { ErrorCode, isMoltError } from '../../../src/core/errors.ts';
import { createMtlsFetch, type MtlsFetch } from '../../../src/platform/https/mtls-fetch.ts';
import { kubeBinaries } from '../../../src/platform/kube/binaries.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { tempDir } from '../../../src/platform/process/managed-process.ts';
import {
  createKubernetesAgentClient,
  type KubernetesAgentClient,
} from '../../../src/protocol/agent-kubernetes-client.ts';
import type { ComponentView } from '../../../src/protocol/agent-kubernetes.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';
import { startHostedCluster, type HostedCluster } from './hosted-cluster.ts';

const run = promisify(execFile);
const from = 'v1.35.4';
const to = 'v1.36.3';
let c: HostedCluster;
let mtls: MtlsFetch;
let clients: KubernetesAgentClient[];
let bundle: string;
let scratch: { path: string; remove(): Promise<void> };

/** `molt dev publish-kubernetes` of the v1.36.3 control-plane binaries (kubectl left out: time). */
async function publish(bins: string): Promise<string> {
  const dir = join(scratch.path, 'bins');
  await mkdir(dir);
  for (const n of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
    await symlink(join(bins, n), join(dir, n));
  const [node = process.execPath, ...entry] = moltArgv;
  const { stdout } = await run(
    node,
    [
      ...entry,
      ...['dev', 'publish-kubernetes', '--version', to, '--from', dir],
      ...['--registry', c.registry, '--repository', 'molt/kubernetes', '--insecure', '-o', 'json'],
    ],
    { maxBuffer: 1024 * 1024 },
  );
  return (JSON.parse(stdout) as { bundle: string }).bundle;
}

/** What `/version` of one API server says (public: system:public-info-viewer). */
async function gitVersion(port: number): Promise<string> {
  const dispatcher = new Agent({ connect: { ca: c.kube.ca } });
  try {
    const res = await fetch(`https://127.0.0.1:${String(port)}/version`, { dispatcher });
    return ((await res.json()) as { gitVersion: string }).gitVersion;
  } finally {
    await dispatcher.close();
  }
}

const byName = (views: readonly ComponentView[]): Record<string, ComponentView> =>
  Object.fromEntries(views.map((v) => [v.name, v]));
const pids = async (client: KubernetesAgentClient): Promise<Record<string, number | undefined>> =>
  Object.fromEntries((await client.controlPlane()).components.map((v) => [v.name, v.pid]));

before(async () => {
  scratch = await tempDir('cp-components');
  c = await startHostedCluster({ version: from, healthTimeoutSeconds: 60 });
  const pem = (name: string): Promise<string> => readFile(join(c.pki.dir, name), 'utf8');
  mtls = createMtlsFetch({
    ca: await pem('ca.pem'),
    cert: await pem('operator.pem'),
    key: await pem('operator.key'),
    // An apply waits for the component to become healthy: minutes, not the default 5 s.
    timeoutMs: 300_000,
  });
  clients = c.machines.machines.map((m) =>
    createKubernetesAgentClient({ baseUrl: m.apiUrl, fetch: mtls.fetch }),
  );
  bundle = await publish(await kubeBinaries(undefined, to));
});

after(async () => {
  await (mtls as MtlsFetch | undefined)?.close();
  await (c as HostedCluster | undefined)?.stop();
  await (scratch as typeof scratch | undefined)?.remove();
});

describe('control-plane components rendered and supervised by the agents', () => {
  it('runs all three components on every machine, healthy, on the initial version', async () => {
    for (const client of clients) {
      // A scheduler or controller manager that lost its leader lease on a loaded machine exits
      // and is started again (Restart=always): wait out such a restart, then all must be healthy.
      let views = (await client.controlPlane()).components;
      for (let i = 0; i < 60 && !views.every((v) => v.running && v.healthy); i++) {
        await sleep(1_000);
        views = (await client.controlPlane()).components;
      }
      assert.deepEqual(
        views.map((v) => [v.name, v.version, v.running, v.healthy]),
        [
          ['kube-apiserver', from, true, true],
          ['kube-controller-manager', from, true, true],
          ['kube-scheduler', from, true, true],
        ],
        JSON.stringify(views),
      );
    }
    for (const port of c.apiserverPorts) assert.equal(await gitVersion(port), from);
  });

  it('pre-pulls the new bundle on every machine and restarts nothing', async () => {
    const before = await Promise.all(clients.map(pids));
    for (const [i, client] of clients.entries()) {
      const staged = await client.prepull({ bundle });
      assert.equal(staged.version, to);
      const root = c.machines.machines[i]?.root ?? '';
      assert.equal(staged.dir, join(root, 'state', 'kubernetes', bundle.slice(-64)));
    }
    assert.deepEqual(await Promise.all(clients.map(pids)), before);
  });

  it('applies kube-apiserver v1.36.3 on one machine: only it restarts, and it serves v1.36.3', async () => {
    const [one] = clients;
    assert.ok(one !== undefined);
    const before = await Promise.all(clients.map(pids));
    const view = await one.applyComponent('kube-apiserver', {
      version: to,
      bundle,
      emulatedVersion: '1.35',
    });
    assert.equal(view.healthy, true);
    const after = await Promise.all(clients.map(pids));
    assert.notEqual(after[0]?.['kube-apiserver'], before[0]?.['kube-apiserver']);
    assert.equal(after[0]?.['kube-controller-manager'], before[0]?.['kube-controller-manager']);
    assert.equal(after[0]?.['kube-scheduler'], before[0]?.['kube-scheduler']);
    assert.deepEqual(after.slice(1), before.slice(1), 'the other machines untouched');
    assert.equal(await gitVersion(c.apiserverPorts[0] ?? 0), to);
    assert.equal(await gitVersion(c.apiserverPorts[1] ?? 0), from);
    const api = byName((await one.controlPlane()).components)['kube-apiserver'];
    assert.ok(api !== undefined);
    assert.equal(api.version, to);
    assert.equal(api.bundle, bundle);
    assert.equal(api.emulatedVersion, '1.35');
    assert.equal(api.healthy, true);
    const again = await one.applyComponent('kube-apiserver', {
      version: to,
      bundle,
      emulatedVersion: '1.35',
    });
    assert.equal(again.pid, api.pid, 'the same apply again restarts nothing');
  });

  it('restores the previous spec when the binary refuses a flag, and fails with the reason', async () => {
    const [one] = clients;
    assert.ok(one !== undefined);
    const before = byName((await one.controlPlane()).components)['kube-apiserver'];
    await assert.rejects(
      one.applyComponent('kube-apiserver', {
        version: to,
        bundle,
        emulatedVersion: '1.35',
        extraArgs: { 'no-such-flag': 'x' },
      }),
      (e: unknown) =>
        isMoltError(e, ErrorCode.KubeComponentUnhealthy) && /unknown flag/.test(e.message),
    );
    const now = byName((await one.controlPlane()).components)['kube-apiserver'];
    assert.ok(now !== undefined && before !== undefined);
    assert.equal(now.hash, before.hash, 'back on the previous spec');
    assert.equal(now.version, to);
    assert.equal(now.healthy, true, now.message);
    assert.equal(await gitVersion(c.apiserverPorts[0] ?? 0), to);
    const core = (await loadKubeConfig(c.kube.admin.kubeconfig)).makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await core.listNamespace();
  });
});
